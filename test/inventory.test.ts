import fc from 'fast-check'
import { sql } from 'kysely'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { DbHandle } from '../src/db/handle.js'
import { createInventoryRepository } from '../src/orders/inventory.repository.js'
import { COMPACT_FROM_ROWS } from '../src/orders/inventory.service.js'
import { buildTestApp, onServices, type TestApp } from './helpers.js'

/**
 * The inventory's maintained counts (migration 0006) against the truth: a count over the pets table after
 * any sequence of creates, edits, deletes, orders and compactions, also concurrent ones. SQLite in
 * `npm test`, PostgreSQL in `test:services` (where the compactions race real concurrent transactions).
 */
let t: TestApp
let key: string
beforeAll(async () => {
  t = await buildTestApp()
  key = await t.issueKey()
})
afterAll(() => t?.close())

const send = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  t.app.inject({ method, url, headers: t.auth(key), ...(payload && { payload }) })

async function inventory() {
  const response = await send('GET', '/v1/store/inventory')
  expect(response.statusCode).toBe(200)
  return response.json()
}

/** What the inventory must say: counted from the pets themselves. */
async function truth() {
  const rows = await t.deps.database.db
    .selectFrom('pets')
    .select(['status', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('deleted_at', 'is', null)
    .where('status', 'is not', null)
    .groupBy('status')
    .execute()
  const counts: Record<string, number> = { available: 0, pending: 0, sold: 0 }
  for (const row of rows) counts[row.status as string] = Number(row.n)
  return counts
}

const createPet = async (status: string | undefined) =>
  (await send('POST', '/v1/pets', { name: 'Rex', categoryId: 1, ...(status && { status }) })).json()
    .id as number

const status = fc.constantFrom('available', 'pending', 'sold', undefined)
/** Each step names its pet as an index into the pets made so far, so shrinking keeps it meaningful. */
const step = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), status }),
  fc.record({ kind: fc.constant('patch' as const), pet: fc.nat(), status }),
  fc.record({ kind: fc.constant('delete' as const), pet: fc.nat() }),
  fc.record({ kind: fc.constant('order' as const), pet: fc.nat() }),
  fc.record({ kind: fc.constantFrom('approve', 'deliver', 'cancel'), order: fc.nat() }),
  fc.record({ kind: fc.constant('compact' as const) }),
)
type Step = typeof step extends fc.Arbitrary<infer S> ? S : never

async function run(s: Step, pets: number[], orders: number[]): Promise<void> {
  const petOf = (i: number) => pets[i % pets.length] ?? 0
  if (s.kind === 'create') pets.push(await createPet(s.status))
  else if (s.kind === 'patch') await send('PATCH', `/v1/pets/${petOf(s.pet)}`, { status: s.status ?? null })
  else if (s.kind === 'delete') await send('DELETE', `/v1/pets/${petOf(s.pet)}`)
  else if (s.kind === 'order') {
    const placed = await send('POST', '/v1/store/orders', { petId: petOf(s.pet) })
    if (placed.statusCode === 201) orders.push(placed.json().id)
  } else if (s.kind === 'compact') await createInventoryRepository(t.deps.database).compactStatusCounts()
  else {
    const to = { approve: 'approved', deliver: 'delivered', cancel: 'cancelled' }[s.kind]
    await send('PATCH', `/v1/store/orders/${orders[s.order % orders.length] ?? 0}`, { status: to })
  }
}

test('after any sequence of pet and order changes the inventory equals a count over the pets', async () => {
  const property = fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
    const pets = [await createPet('available')]
    const orders: number[] = []
    for (const s of steps) await run(s, pets, orders)
    expect(await inventory()).toEqual(await truth())
  })
  await fc.assert(property, { numRuns: 40 })
})

test('compactions racing concurrent writes neither lose nor double a change', async () => {
  const writes = Array.from({ length: 120 }, async (_, i) => {
    const id = await createPet(i % 3 === 0 ? 'sold' : 'available')
    if (i % 2 === 0) {
      const placed = (await send('POST', '/v1/store/orders', { petId: id })).json()
      if (i % 4 === 0) await send('PATCH', `/v1/store/orders/${placed.id}`, { status: 'cancelled' })
    }
    if (i % 5 === 0) await send('DELETE', `/v1/pets/${id}`)
  })
  const compactions = Array.from({ length: 8 }, () =>
    createInventoryRepository(t.deps.database).compactStatusCounts(),
  )
  await Promise.all([...writes, ...compactions])
  expect(await inventory()).toEqual(await truth())
  await Promise.all([
    createInventoryRepository(t.deps.database).compactStatusCounts(),
    createInventoryRepository(t.deps.database).compactStatusCounts(),
  ])
  expect(await inventory()).toEqual(await truth())
  const rows = await t.deps.database.db.selectFrom('pet_status_counts').select('status').execute()
  expect(rows.length).toBeLessThanOrEqual(3)
})

const countRows = async () =>
  t.deps.database.db
    .selectFrom('pet_status_counts')
    .select([(eb) => eb.fn.countAll<number | string>().as('rows'), (eb) => eb.fn.max('id').as('last')])
    .executeTakeFirstOrThrow()

test('each instance folds the counts by itself once they grow long', async () => {
  const before = await countRows()
  await Promise.all(Array.from({ length: COMPACT_FROM_ROWS + 10 }, () => createPet('available')))
  // The ids show the rows were appended, whether or not a fold has run since; then the timer folds them.
  expect(Number((await countRows()).last) - Number(before.last)).toBeGreaterThanOrEqual(
    COMPACT_FROM_ROWS + 10,
  )
  await expect.poll(async () => Number((await countRows()).rows), { timeout: 5_000 }).toBeLessThanOrEqual(3)
  expect(await inventory()).toEqual(await truth())
})

test('a long backlog is folded in batches, each its own transaction, until none is left', async () => {
  await Promise.all(Array.from({ length: 100 }, (_, i) => createPet(i % 2 ? 'sold' : 'available')))
  const backlog = Number((await countRows()).rows)
  // Each transaction of the fold, and how many rows it folded: one transaction for all would fail here.
  const folds: number[] = []
  const database = t.deps.database
  const counted: DbHandle = {
    ...database,
    write: (work) =>
      database.write(async (trx) => {
        const folded = await work(trx)
        folds.push(Number(folded))
        return folded
      }),
  }
  await createInventoryRepository(counted).compactStatusCounts(7)
  expect(folds.length).toBeGreaterThanOrEqual(Math.ceil((backlog - 3) / 7))
  expect(folds.every((folded) => folded <= 7)).toBe(true)
  expect(folds.slice(0, -1).every((folded) => folded === 7)).toBe(true)
  expect(folds.at(-1)).toBeLessThan(7)
  expect(Number((await countRows()).rows)).toBeLessThanOrEqual(3)
  expect(await inventory()).toEqual(await truth())
})

test.runIf(onServices)('on PostgreSQL a TRUNCATE of pets empties the counts too', async () => {
  await createPet('available')
  await sql`truncate pets cascade`.execute(t.deps.database.db)
  expect(await inventory()).toEqual({ available: 0, pending: 0, sold: 0 })
})
