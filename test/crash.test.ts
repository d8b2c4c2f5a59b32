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
 * points, and in the middle of a burst of orders (an order, its pet and the inventory's counts change in
 * one transaction), restarted on the same store each time. `npm test` runs it on SQLite (and checks the file's
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

type Order = { id: number; petId: number; status: string }

test('SIGKILL mid-burst of orders leaves pets and orders consistent, and loses no acknowledged order', async () => {
  const { key } = await issueUnlimitedKey(env, dir)
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const first = await start()
  const base = `http://127.0.0.1:${first.port}/v1`
  const petIds: number[] = []
  for (let i = 0; i < 100; i++) {
    const body = JSON.stringify({ name: `For sale ${i}`, categoryId: 1, status: 'available' })
    petIds.push(
      ((await (await fetch(`${base}/pets`, { method: 'POST', headers, body })).json()) as { id: number }).id,
    )
  }
  const inventory = async (url: string) =>
    (await (await fetch(`${url}/store/inventory`, { headers })).json()) as Record<string, number>
  const before = await inventory(base)
  const acknowledged: Order[] = []
  let failed = 0
  const orders = petIds.map(async (petId) => {
    try {
      const response = await fetch(`${base}/store/orders`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ petId }),
      })
      if (response.status === 201) acknowledged.push((await response.json()) as Order)
      else failed++
    } catch {
      failed++
    }
  })
  while (acknowledged.length < 20 && failed === 0) await new Promise((resolve) => setTimeout(resolve, 1))
  await killService(first)
  await Promise.all(orders)
  expect(failed, 'the kill came after every order').toBeGreaterThan(0)

  const survivor = await start()
  const again = `http://127.0.0.1:${survivor.port}/v1`
  const stored = (await (await fetch(`${again}/store/orders?limit=100`, { headers })).json()) as Order[]
  const pets = (await (await fetch(`${again}/pets?id=${petIds.join(',')}`, { headers })).json()) as Array<{
    id: number
    status: string
  }>
  expect(pets).toHaveLength(100)
  for (const order of acknowledged) expect(stored).toContainEqual({ ...order })
  const ordered = new Map(stored.map((order) => [order.petId, order]))
  expect(ordered.size, 'one order per pet at most').toBe(stored.length)
  for (const pet of pets) {
    expect(pet.status, `pet ${pet.id}`).toBe(ordered.has(pet.id) ? 'pending' : 'available')
    if (ordered.has(pet.id)) expect(ordered.get(pet.id)?.status).toBe('placed')
  }
  // The maintained counts moved with the orders that committed, and only with them.
  expect(await inventory(again)).toEqual({
    ...before,
    available: (before.available ?? 0) - stored.length,
    pending: (before.pending ?? 0) + stored.length,
  })
  console.info(
    `orders crash: ${acknowledged.length} acknowledged (all found), ${stored.length} stored, 100 pets consistent`,
  )
}, 60_000)

test.skipIf(onServices)('the SQLite file is intact after the crashes', () => {
  const db = new Database(env.DATABASE_URL?.slice('sqlite:'.length) ?? '')
  expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
  db.close()
})
