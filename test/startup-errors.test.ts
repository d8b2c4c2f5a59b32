import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readdirSync } from 'node:fs'
import { type AddressInfo, createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { freePort, logLine, ROOT, serviceFixture, waitUntilHealthy } from './service-process.js'

/** CONTRACT §1: start-up problems name their setting and say the cause in words, on one line. */

/** Root writes anywhere: as root, the permission test runs the service as `nobody`. */
const NOBODY = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {}
/**
 * Whether that works here: `nobody` must reach node and the built service (a checkout under a folder only
 * root may enter, such as /root or a temporary clone, keeps it out; then the test is skipped).
 */
const canDropToNobody =
  spawnSync(
    process.execPath,
    ['-e', `require('node:fs').accessSync(${JSON.stringify(join(ROOT, 'dist', 'main.js'))})`],
    NOBODY,
  ).status === 0

const fixture = serviceFixture()
let occupied: Server | undefined
afterEach(() => {
  occupied?.close()
  occupied = undefined
})

async function failedStart(env: Record<string, string>): Promise<string> {
  const service = await fixture.start(env)
  expect(await service.exited).toBe(1)
  const lines = service.stderr().split('\n').filter(Boolean)
  expect(lines).toHaveLength(1)
  expect(service.stderr()).not.toMatch(/^\s+at /m)
  return lines[0] ?? ''
}

describe('a start that cannot succeed says which setting and why', () => {
  it('names DATABASE_URL (password hidden) and "connection refused" for a PostgreSQL nobody serves', async () => {
    const line = await failedStart({ DATABASE_URL: 'postgres://petstore:s3cret@127.0.0.1:1/petstore' })
    expect(line).toBe(
      'petstore: cannot start: DATABASE_URL postgres://petstore:***@127.0.0.1:1/petstore: connection refused',
    )
  })

  it('names REDIS_URL (password hidden) and "connection refused" for a Redis nobody serves, within seconds', async () => {
    const port = await freePort()
    const started = Date.now()
    const line = await failedStart({ REDIS_URL: `redis://:s3cret@127.0.0.1:${port}` })
    expect(line).toBe(`petstore: cannot start: REDIS_URL redis://:***@127.0.0.1:${port}: connection refused`)
    expect(Date.now() - started).toBeLessThan(15_000)
  })

  it('names DATABASE_URL and "no such directory" for a SQLite file in a folder that does not exist, and creates none', async () => {
    const path = join(fixture.state.dir, 'missing', 'deeper', 'pets.sqlite')
    const line = await failedStart({ DATABASE_URL: `sqlite:${path}` })
    expect(line).toBe(`petstore: cannot start: DATABASE_URL sqlite:${path}: no such directory`)
    expect(existsSync(join(fixture.state.dir, 'missing'))).toBe(false)
  })

  it.skipIf(!canDropToNobody)(
    'names DATABASE_URL and "permission denied" for a SQLite file in a folder it may not write',
    () => {
      chmodSync(fixture.state.dir, 0o755)
      const folder = join(fixture.state.dir, 'read-only')
      mkdirSync(folder, { mode: 0o555 })
      chmodSync(folder, 0o555)
      const path = join(folder, 'pets.sqlite')
      const run = spawnSync(process.execPath, ['dist/main.js'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, DATABASE_URL: `sqlite:${path}`, PORT: '0' },
        encoding: 'utf8',
        ...NOBODY,
      })
      expect(run.status).toBe(1)
      expect(run.stderr).toBe(`petstore: cannot start: DATABASE_URL sqlite:${path}: permission denied\n`)
      expect(existsSync(path)).toBe(false)
    },
  )

  it('names PORT, the cause and what to do when the port is taken', async () => {
    const server = createServer()
    occupied = server
    const port = await new Promise<number>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
    )
    const line = await failedStart({ PORT: String(port) })
    expect(line).toBe(
      `petstore: cannot start: PORT ${port} on HOST 127.0.0.1: address already in use: another process listens there; set PORT`,
    )
  })
})

describe('start-up warnings', () => {
  it('names an unknown PETSTORE_* variable and the closest known one: a plain line on stderr, and in the log', async () => {
    const service = await fixture.start({ PETSTORE_PORTT: '1', LOG_LEVEL: 'info' })
    await waitUntilHealthy(service)
    expect(service.stderr()).toBe(
      'petstore: warning: PETSTORE_PORTT is not a setting of petstore (ignored): did you mean PORT?\n',
    )
    const warning = await logLine(service, (line) => String(line.msg).startsWith('PETSTORE_PORTT'))
    expect(warning).toMatchObject({
      level: 40,
      msg: 'PETSTORE_PORTT is not a setting of petstore (ignored): did you mean PORT?',
    })
  })

  it('warns when a second process serves the same SQLite file, and not when the first is gone', async () => {
    const first = await fixture.start({ LOG_LEVEL: 'info' })
    await waitUntilHealthy(first)
    const second = await fixture.start({ LOG_LEVEL: 'info' })
    await waitUntilHealthy(second)
    const warning = await logLine(second, (line) => String(line.msg).startsWith('another petstore process'))
    expect(warning.msg).toContain(`(pid ${first.child.pid})`)
    expect(warning.msg).toContain('rate limits and caches are then per process')
    for (const service of [second, first]) {
      service.child.kill('SIGTERM')
      expect(await service.exited).toBe(0)
    }
    expect(readdirSync(fixture.state.dir).filter((name) => name.includes('-serving-'))).toEqual([])
    const third = await fixture.start({ LOG_LEVEL: 'info' })
    await waitUntilHealthy(third)
    await logLine(third, (line) => line.msg === 'serving from this database')
    expect(third.stdout()).not.toContain('another petstore process')
  })
})
