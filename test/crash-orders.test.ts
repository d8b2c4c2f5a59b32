import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { createTestStores, type TestStores } from './helpers.js'
import {
  issueUnlimitedKey,
  killService,
  type Service,
  spawnService,
  waitUntilHealthy,
} from './service-process.js'

/**
 * An order and its pet change in one transaction: SIGKILL in the middle of a burst of orders leaves every
 * pet either available with no order, or pending with exactly one placed order, and loses no order that
 * was acknowledged. SQLite in `npm test`, PostgreSQL in `test:services`.
 */
let dir: string
let stores: TestStores
let env: Record<string, string>
const started: Service[] = []
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-crash-orders-'))
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
  console.info(
    `orders crash: ${acknowledged.length} acknowledged (all found), ${stored.length} stored, 100 pets consistent`,
  )
}, 60_000)
