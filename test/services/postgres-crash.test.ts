import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { burstThenKill, expectNothingLost } from '../crash-scenario.js'
import { killService, runCli, type Service, spawnService, waitUntilHealthy } from '../service-process.js'
import { createTestDatabase } from './test-stores.js'

/** test/crash.test.ts on PostgreSQL: SIGKILL mid-burst at random points, restart, nothing lost. */

const RUNS = 5
let database: Awaited<ReturnType<typeof createTestDatabase>>
let dir: string
let env: Record<string, string>
const started: Service[] = []

beforeAll(async () => {
  database = await createTestDatabase()
  dir = mkdtempSync(join(tmpdir(), 'petstore-pg-crash-'))
  env = { DATABASE_URL: database.url, LOG_LEVEL: 'warn' }
})
afterAll(async () => {
  await Promise.all(started.map(killService))
  await database?.drop()
  rmSync(dir, { recursive: true, force: true })
})

async function start(): Promise<Service> {
  const service = await spawnService(env)
  started.push(service)
  await waitUntilHealthy(service)
  return service
}

test(`SIGKILL mid-burst at ${RUNS} random points loses no acknowledged pet and stores nothing unaccounted for`, async () => {
  const args = ['keys', 'create', '--plan', 'enterprise', '--per-minute', '1000000', '--per-day', '1000000']
  const { key } = JSON.parse((await runCli([...args, '--json'], env, dir)).stdout)
  for (let run = 0; run < RUNS; run++) {
    const killAfter = 1 + Math.floor(Math.random() * 150)
    const burst = await burstThenKill(await start(), key, { count: 300, killAfter, label: `run${run}` })
    expect(burst.failed, `run ${run} was killed after ${killAfter} acknowledgements`).toBeGreaterThan(0)
    const survivor = await start()
    await expectNothingLost(`http://127.0.0.1:${survivor.port}`, key, `run${run}`, burst)
    await killService(survivor)
  }
})
