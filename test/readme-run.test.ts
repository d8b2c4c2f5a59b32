import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import {
  freePort,
  killService,
  ROOT,
  type Service,
  spawnService,
  waitUntilHealthy,
} from './service-process.js'

/**
 * The README's first walk through, run as a newcomer would (bash and curl, against the built service on
 * a fresh SQLite file): every comment line that follows a command shows what the command printed, in
 * order. `...` in a comment stands for anything; timestamps are compared as timestamps.
 */
const hasCurl = spawnSync('curl', ['--version']).status === 0
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
const section = readme.slice(
  readme.indexOf('## A first walk through'),
  readme.indexOf('## Events and webhooks'),
)
const script = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]).join('\n')

/** The script cut where a command's output ends: each chunk's commands, and the comments that show it. */
function chunks(): { code: string; shown: string[] }[] {
  const result: { code: string; shown: string[] }[] = [{ code: '', shown: [] }]
  for (const line of script.split('\n')) {
    const last = result[result.length - 1] as { code: string; shown: string[] }
    const shown = /^# (?!\d+\. )(.*)$/.exec(line)
    if (shown && last.code.trim() !== '') last.shown.push(shown[1] ?? '')
    else if (last.shown.length > 0) result.push({ code: `${line}\n`, shown: [] })
    else last.code += `${line}\n`
  }
  return result
}

const TIMESTAMP = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
/** A comment line as a pattern: `...` is anything, a timestamp any timestamp. */
function pattern(shown: string): RegExp {
  const parts = shown.replace(TIMESTAMP, '<timestamp>').split('...')
  const body = parts.map((part) => escapeRegExp(part).replaceAll('<timestamp>', TIMESTAMP.source)).join('.*')
  return new RegExp(`^${body}\\r?$`)
}

let dir: string
let service: Service
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-readme-'))
  service = await spawnService({ DATABASE_URL: `sqlite:${join(dir, 'petstore.sqlite')}`, LOG_LEVEL: 'warn' })
  await waitUntilHealthy(service)
})
afterAll(async () => {
  if (service) await killService(service)
  rmSync(dir, { recursive: true, force: true })
})

test.skipIf(!hasCurl)('the walk through prints what its comments show', () => {
  const parts = chunks()
  expect(parts.filter((part) => part.shown.length > 0).length).toBeGreaterThan(8)
  // A command's output may end without a newline: each mark starts on a line of its own.
  const marked = parts.map((part, index) => `${part.code}printf '\\n@@chunk ${index}\\n'\n`).join('')
  const base = `http://127.0.0.1:${service.port}/v1`
  const run = marked.replace('BASE=http://127.0.0.1:8080/v1', `BASE=${base}`)
  const output = execFileSync('bash', ['-euo', 'pipefail', '-c', run], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, DATABASE_URL: `sqlite:${join(dir, 'petstore.sqlite')}` },
    encoding: 'utf8',
  })
  const printed = output.split(/\n@@chunk \d+\n/)
  parts.forEach((part, index) => {
    const lines = (printed[index] ?? '').replaceAll(base, 'http://127.0.0.1:8080/v1').split('\n')
    let at = 0
    for (const shown of part.shown) {
      const expected = pattern(shown)
      while (at < lines.length && !expected.test(lines[at] ?? '')) at++
      expect(at, `"${shown}" after: ${part.code}\nprinted:\n${printed[index]}`).toBeLessThan(lines.length)
      at++
    }
  })
})

/**
 * The README's "Events and webhooks" section, run as written: its receiver saved as receiver.mjs, then its
 * sh block (a key, the endpoint subscribed, the receiver started with the secret, a pet created) against a
 * service started with PETSTORE_WEBHOOKS_ALLOW_PRIVATE=1. The receiver must print the event it verified,
 * as the block's comment shows. Only the addresses change: the service's port and a free one for 4000.
 */
test.skipIf(!hasCurl)(
  'the webhook section runs as written: the receiver prints the verified event',
  async () => {
    const webhooks = readme.slice(readme.indexOf('## Events and webhooks'), readme.indexOf('## Commands'))
    const receiverCode = /```js\n([\s\S]*?)```/.exec(webhooks)?.[1] ?? ''
    const commands = /```sh\n([\s\S]*?)```/.exec(webhooks)?.[1] ?? ''
    const shown = [...commands.matchAll(/^# (?!\d+\. )(.*)$/gm)].map((match) => match[1] ?? '')
    expect(shown).toHaveLength(1)
    // Inside the project, so that `import 'standardwebhooks'` resolves as it does in this folder.
    const folder = mkdtempSync(join(ROOT, 'node_modules', '.readme-webhooks-'))
    const env = {
      DATABASE_URL: `sqlite:${join(dir, 'webhooks.sqlite')}`,
      LOG_LEVEL: 'warn',
      PETSTORE_WEBHOOKS_ALLOW_PRIVATE: '1',
    }
    const hooked = await spawnService(env)
    try {
      await waitUntilHealthy(hooked)
      writeFileSync(join(folder, 'receiver.mjs'), receiverCode)
      const port = String(await freePort())
      const run = commands
        .replace('BASE=http://127.0.0.1:8080/v1', `BASE=http://127.0.0.1:${hooked.port}/v1`)
        .replaceAll('127.0.0.1:4000', `127.0.0.1:${port}`)
        .replace('RECEIVER_PORT=4000', `RECEIVER_PORT=${port}`)
        .replace('node receiver.mjs', `node ${join(folder, 'receiver.mjs')}`)
      // As a whole number: the free port itself may contain the digits, as 40007 does.
      expect(run).not.toMatch(/\b4000\b/)
      const output = execFileSync('bash', ['-euo', 'pipefail', '-c', run], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, DATABASE_URL: env.DATABASE_URL },
        encoding: 'utf8',
      })
      const lines = output.split('\n')
      for (const line of shown)
        expect(
          lines.some((printed) => pattern(line).test(printed)),
          output,
        ).toBe(true)
    } finally {
      await killService(hooked)
      rmSync(folder, { recursive: true, force: true })
    }
  },
)
