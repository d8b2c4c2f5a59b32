import { execFileSync } from 'node:child_process'
import { once } from 'node:events'
import { chownSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, test } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers.js'

const pgBin = process.env.TEST_PG_BIN
if (!pgBin) throw new Error('TEST_PG_BIN is not set: run these suites with `npm run test:services`')

/** A PostgreSQL of this test's own, so it can be stopped and started again. */
const dir = mkdtempSync(join(tmpdir(), 'petstore-pg-fault-'))
const data = join(dir, 'data')
let port = 0
let t: TestApp | undefined

const asPostgres = (command: string, args: string[]) =>
  execFileSync('runuser', ['-u', 'postgres', '--', join(pgBin ?? '', command), ...args], { stdio: 'ignore' })
const pgCtl = (...args: string[]) =>
  asPostgres('pg_ctl', ['-D', data, '-l', join(dir, 'postgres.log'), '-w', ...args])

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address() as { port: number }
  server.close()
  return address.port
}

afterAll(async () => {
  await t?.close()
  try {
    pgCtl('-m', 'immediate', 'stop')
  } catch {}
  rmSync(dir, { recursive: true, force: true })
})

test('with PostgreSQL gone requests get 503 unavailable and /readyz 503; once it is back they succeed without a restart', async () => {
  chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), -1)
  asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8'])
  port = await freePort()
  const start = () => pgCtl('-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, 'start')
  start()
  t = await buildTestApp({ env: { DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres` } })
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
