import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect } from 'vitest'
import { type Run, runCli } from './service-process.js'

export type CreatedKey = {
  id: number
  key: string
  plan: string
  limits: { perMinute: number; perDay: number }
  scope: string
  expiresAt: string | null
}

/**
 * `bin/petstore` run in a temporary folder of each test (so no stray .env is read) on that folder's
 * SQLite file. Call once at the top of a test file: it registers the hooks.
 */
export function cliFixture() {
  const state = { dir: '', databaseUrl: '' }
  beforeEach(() => {
    state.dir = mkdtempSync(join(tmpdir(), 'petstore-cli-'))
    state.databaseUrl = `sqlite:${join(state.dir, 'petstore.sqlite')}`
  })
  afterEach(() => rmSync(state.dir, { recursive: true, force: true }))

  const petstore = (args: string[], env: Record<string, string> = {}): Promise<Run> =>
    runCli(args, { DATABASE_URL: state.databaseUrl, ...env }, state.dir)

  /** A command that prints one JSON line: its value. */
  const json = async <T>(args: string[], env: Record<string, string> = {}): Promise<T> => {
    const run = await petstore([...args, '--json'], env)
    expect(run, run.stderr).toMatchObject({ code: 0, stderr: '' })
    const lines = run.stdout.split('\n').filter(Boolean)
    expect(lines).toHaveLength(1)
    return JSON.parse(lines[0] ?? '')
  }

  return {
    state,
    petstore,
    json,
    createKey: (args: string[], env: Record<string, string> = {}) =>
      json<CreatedKey>(['keys', 'create', ...args], env),
    listKeys: () => json<Array<Record<string, unknown>>>(['keys', 'list']),
  }
}

export function stderrLines(run: Run): string[] {
  return run.stderr.split('\n').filter(Boolean)
}
