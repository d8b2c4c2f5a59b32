import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { burstThenKill, expectNothingLost } from './crash-scenario.js'
import { createTestStores, onServices, type TestStores } from './helpers.js'
import {
  issueUnlimitedKey,
  killService,
  type Service,
  spawnService,
  waitUntilHealthy,
} from './service-process.js'

/**
 * Crash consistency: the real server, SIGKILLed in the middle of a burst of concurrent creates at random
 * points, restarted on the same store each time. `npm test` runs it on SQLite (and checks the file's
 * integrity), `npm run test:services` on PostgreSQL.
 */

const RUNS = 5
let dir: string
let stores: TestStores
let env: Record<string, string>
const started: Service[] = []

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-crash-'))
  stores = await createTestStores(dir)
  env = { ...stores.env, LOG_LEVEL: 'warn' }
})
afterAll(async () => {
  await Promise.all(started.map(killService))
  await stores?.drop()
  rmSync(dir, { recursive: true, force: true })
})

async function start(): Promise<Service> {
  const service = await spawnService(env)
  started.push(service)
  await waitUntilHealthy(service)
  return service
}

test(`SIGKILL mid-burst at ${RUNS} random points loses no acknowledged pet and stores nothing unaccounted for`, async () => {
  const { key } = await issueUnlimitedKey(env, dir)
  const totals = { acknowledged: 0, stored: 0 }
  for (let run = 0; run < RUNS; run++) {
    const killAfter = 1 + Math.floor(Math.random() * 150)
    const burst = await burstThenKill(await start(), key, { count: 300, killAfter, label: `run${run}` })
    expect(burst.failed, `run ${run} was killed after ${killAfter} acknowledgements`).toBeGreaterThan(0)
    const survivor = await start()
    const counts = await expectNothingLost(`http://127.0.0.1:${survivor.port}`, key, `run${run}`, burst)
    totals.acknowledged += counts.acknowledged
    totals.stored += counts.stored
    await killService(survivor)
  }
  expect(totals.stored).toBeGreaterThanOrEqual(totals.acknowledged)
  console.info(
    `crash runs: ${RUNS} on ${env.DATABASE_URL?.split(':')[0]}, acknowledged: ${totals.acknowledged} (all found), stored unacknowledged and replayed: ${totals.stored - totals.acknowledged}`,
  )
  // Ten process starts and 1,500 requests: about 13 s alone, longer beside the rest of the suite.
}, 90_000)

test.skipIf(onServices)('the SQLite file is intact after the crashes', () => {
  const db = new Database(env.DATABASE_URL?.slice('sqlite:'.length) ?? '')
  expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
  db.close()
})
