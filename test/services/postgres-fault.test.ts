import { execFileSync } from 'node:child_process'
import { chownSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers.js'
import { freePort } from '../service-process.js'

const pgBin = process.env.TEST_PG_BIN
if (!pgBin) throw new Error('TEST_PG_BIN is not set: run these suites with `npm run test:services`')

/** A PostgreSQL of this test's own, so it can be stopped and started again. */
const dir = mkdtempSync(join(tmpdir(), 'petstore-pg-fault-'))
const data = join(dir, 'data')
let port = 0
let t: TestApp

const asPostgres = (command: string, args: string[]) =>
  execFileSync('runuser', ['-u', 'postgres', '--', join(pgBin ?? '', command), ...args], { stdio: 'ignore' })
const pgCtl = (...args: string[]) =>
  asPostgres('pg_ctl', ['-D', data, '-l', join(dir, 'postgres.log'), '-w', ...args])

afterAll(async () => {
  await t?.close()
  try {
    pgCtl('-m', 'immediate', 'stop')
  } catch {}
  rmSync(dir, { recursive: true, force: true })
})

const start = () => pgCtl('-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, 'start')
const DEADLINE_MS = 1000

beforeAll(async () => {
  chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), -1)
  asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8'])
  port = await freePort()
  start()
  t = await buildTestApp({
    env: {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres`,
      PETSTORE_DB_TIMEOUT_MS: String(DEADLINE_MS),
    },
  })
})

/** Sends `signal` to the postmaster and every backend: the server stops answering, connections stay open. */
function signalPostgres(signal: 'SIGSTOP' | 'SIGCONT'): void {
  const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
  const backends = execFileSync('pgrep', ['-P', String(postmaster)])
    .toString()
    .split('\n')
    .filter(Boolean)
  for (const pid of [postmaster, ...backends.map(Number)]) process.kill(pid, signal)
}

/** The response and how long it took. */
async function timed<T>(send: () => Promise<T>): Promise<{ response: T; ms: number }> {
  const started = Date.now()
  const response = await send()
  return { response, ms: Date.now() - started }
}

test('with PostgreSQL stalled (SIGSTOP) requests get 503 within the deadline and /readyz 503 within 1 s; SIGCONT recovers', async () => {
  const app = t.app
  const key = await t.issueKey()
  const auth = { authorization: `Bearer ${key}` }
  const list = () => app.inject({ method: 'GET', url: '/v1/pets', headers: auth })
  const create = () =>
    app.inject({ method: 'POST', url: '/v1/pets', headers: auth, payload: { name: 'Rex', categoryId: 1 } })
  expect((await list()).statusCode).toBe(200)
  signalPostgres('SIGSTOP')
  const latencies: string[] = []
  try {
    for (const [name, send] of [
      ['listPets', list],
      ['createPet', create],
      ['listPets', list],
    ] as const) {
      const { response, ms } = await timed(send)
      latencies.push(`${name} ${response.statusCode} in ${ms} ms`)
      expect(response.statusCode).toBe(503)
      expect(response.json()).toMatchObject({ code: 'unavailable', status: 503 })
      expect(response.headers['retry-after']).toBe('1')
      // Two checkouts at most (the key, then the pets), each bounded by the deadline, plus slack.
      expect(ms).toBeLessThan(2 * DEADLINE_MS + 1000)
    }
    const ready = await timed(() => app.inject({ method: 'GET', url: '/readyz' }))
    expect(ready.response.statusCode).toBe(503)
    expect(ready.ms).toBeLessThan(1500)
    latencies.push(`/readyz ${ready.response.statusCode} in ${ready.ms} ms`)
    console.info(`PostgreSQL stalled, deadline ${DEADLINE_MS} ms: ${latencies.join(', ')}`)
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200)
  } finally {
    signalPostgres('SIGCONT')
  }
  expect((await list()).statusCode).toBe(200)
  expect((await create()).statusCode).toBe(201)
  expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200)
})

test('with PostgreSQL gone requests get 503 unavailable and /readyz 503; once it is back they succeed without a restart', async () => {
  const key = await t.issueKey()
  const list = () =>
    t?.app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${key}` } })
  expect((await list())?.statusCode).toBe(200)

  pgCtl('-m', 'immediate', 'stop')
  const during = await list()
  expect(during?.statusCode).toBe(503)
  expect(during?.json()).toMatchObject({ code: 'unavailable', status: 503 })
  expect(during?.headers['retry-after']).toBe('1')
  expect(during?.body).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres/i)
  expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503)

  start()
  let back = false
  for (let attempt = 0; attempt < 100 && !back; attempt++) {
    back = (await list())?.statusCode === 200
    if (!back) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  expect(back).toBe(true)
  expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200)
})
