import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { freePort, get, ROOT } from './service-process.js'

/**
 * `npm run dev` (scripts/dev.sh): the service from src/ under tsx watch. On a terminal (a real pseudo-terminal
 * made by util-linux `script`) its log lines are rendered by pino-pretty; piped, they stay JSON lines.
 */
let stop: (() => void) | undefined
let dir: string | undefined
afterEach(() => {
  stop?.()
  if (dir) rmSync(dir, { recursive: true, force: true })
  stop = dir = undefined
})

async function startDev(onTerminal: boolean) {
  dir = mkdtempSync(join(tmpdir(), 'petstore-dev-'))
  const port = await freePort()
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: `sqlite:${join(dir, 'dev.sqlite')}`,
  }
  const [command, args] = onTerminal
    ? ['script', ['-qfec', 'bash scripts/dev.sh', '/dev/null']]
    : ['bash', ['scripts/dev.sh']]
  // A process group of its own: the watcher, the service and pino-pretty all go with one kill.
  const child = spawn(command, args, { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk) => {
    output += chunk
  })
  stop = () => {
    try {
      process.kill(-(child.pid ?? 0), 'SIGKILL')
    } catch {
      // Already gone.
    }
  }
  await expect
    .poll(async () => (await get(port, '/healthz').catch(() => ({ status: 0 }))).status, { timeout: 20_000 })
    .toBe(200)
  // The access line of that probe reaches stdout at the logger's next flush (every second). The wait is
  // generous: on a loaded CI machine, under tsx, five seconds once did not suffice.
  await expect.poll(() => output, { timeout: 15_000 }).toContain('request completed')
  return output
}

test('on a terminal the log lines are rendered by pino-pretty', async () => {
  const output = await startDev(true)
  expect(output).toMatch(
    /\[\d\d:\d\d:\d\d\.\d{3}\] \S*INFO\S*: \S*Server listening at http:\/\/127\.0\.0\.1:\d+/,
  )
  expect(output).not.toMatch(/\{"level":/)
}, 40_000)

test('piped, the log lines stay JSON, as in production', async () => {
  const output = await startDev(false)
  const lines = output.split('\n').filter((line) => line.startsWith('{'))
  expect(lines.map((line) => JSON.parse(line).msg)).toContain('request completed')
}, 40_000)
