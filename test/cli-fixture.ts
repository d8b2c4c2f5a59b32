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

  /** What every command that opens the database prints first on stderr, for the test's SQLite file. */
  const databaseLine = () => `${DATABASE_LINE}${state.databaseUrl}`

  /** A command that prints one JSON line on stdout, and only the database line on stderr: its value. */
  const json = async <T>(args: string[], env: Record<string, string> = {}): Promise<T> => {
    const run = await petstore([...args, '--json'], env)
    expect(run, run.stderr).toMatchObject({ code: 0, stderr: `${databaseLine()}\n` })
    const lines = run.stdout.split('\n').filter(Boolean)
    expect(lines).toHaveLength(1)
    return JSON.parse(lines[0] ?? '')
  }

  return {
    state,
    petstore,
    databaseLine,
    json,
    createKey: (args: string[], env: Record<string, string> = {}) =>
      json<CreatedKey>(['keys', 'create', ...args], env),
    listKeys: () => json<Array<Record<string, unknown>>>(['keys', 'list']),
  }
}

const DATABASE_LINE = 'petstore: database '

/** The lines a command printed on stderr, but for the database line that the database commands begin with. */
export function stderrLines(run: Run): string[] {
  return run.stderr.split('\n').filter((line) => line && !line.startsWith(DATABASE_LINE))
}
