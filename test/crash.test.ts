import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { burstThenKill, expectNothingLost } from './crash-scenario.js'
import { killService, runCli, type Service, spawnService, waitUntilHealthy } from './service-process.js'

/**
 * Crash consistency on SQLite: the real server, SIGKILLed in the middle of a burst of concurrent creates
 * at random points, restarted on the same file each time. (test/services runs the same on PostgreSQL.)
 */

const RUNS = 5
let dir: string
let env: Record<string, string>
const started: Service[] = []

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-crash-'))
  env = { DATABASE_URL: `sqlite:${join(dir, 'petstore.sqlite')}`, LOG_LEVEL: 'warn' }
})
afterAll(async () => {
  await Promise.all(started.map(killService))
  rmSync(dir, { recursive: true, force: true })
})

async function start(): Promise<Service> {
  const service = await spawnService(env)
  started.push(service)
  await waitUntilHealthy(service)
  return service
}

test(`SIGKILL mid-burst at ${RUNS} random points loses no acknowledged pet, stores nothing unaccounted for, and leaves the file intact`, async () => {
  const created = await runCli(
    ['keys', 'create', '--plan', 'enterprise', '--per-minute', '1000000', '--per-day', '1000000', '--json'],
    env,
    dir,
  )
  const { key } = JSON.parse(created.stdout)
  const totals = { acknowledged: 0, stored: 0 }
  for (let run = 0; run < RUNS; run++) {
    const victim = await start()
    const killAfter = 1 + Math.floor(Math.random() * 150)
    const burst = await burstThenKill(victim, key, { count: 300, killAfter, label: `run${run}` })
    expect(burst.failed, `run ${run} was killed after ${killAfter} acknowledgements`).toBeGreaterThan(0)
    const survivor = await start()
    const counts = await expectNothingLost(`http://127.0.0.1:${survivor.port}`, key, `run${run}`, burst)
    totals.acknowledged += counts.acknowledged
    totals.stored += counts.stored
    await killService(survivor)
  }
  const db = new Database(join(dir, 'petstore.sqlite'))
  expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
  db.close()
  expect(totals.stored).toBeGreaterThanOrEqual(totals.acknowledged)
  console.info(
    `crash runs: ${RUNS}, acknowledged: ${totals.acknowledged} (all found), stored unacknowledged and replayed: ${totals.stored - totals.acknowledged}`,
  )
})
