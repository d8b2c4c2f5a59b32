import { afterAll, beforeAll, expect, it } from 'vitest'
import { createPetstoreClient, PetstoreError } from '../../client/src/index.js'
import { type ServedApp, serveTestApp } from './served-app.js'

/** The client's calls for the key's standing, the pet lifecycle and the store, against the real app. */
let t: ServedApp
beforeAll(async () => {
  t = await serveTestApp()
})
afterAll(() => t.close())

const clientFor = async () =>
  createPetstoreClient({ baseUrl: t.baseUrl, apiKey: await t.issueKey(), sleep: async () => {} })

it('sells a pet through the store, edits one with If-Match, deletes one, and reads the standing and usage', async () => {
  const client = await clientFor()
  const rex = await client.createPet({ name: 'Rex', categoryId: 1, status: 'available' })
  const order = await client.store.placeOrder(rex.id)
  expect(order).toMatchObject({ petId: rex.id, status: 'placed' })
  expect(await client.store.getOrder(order.id)).toEqual(order)
  await client.store.updateOrder(order.id, 'approved')
  expect((await client.store.updateOrder(order.id, 'delivered')).status).toBe('delivered')
  expect(await client.getPets([rex.id])).toEqual([{ ...rex, status: 'sold' }])
  expect(await client.store.inventory()).toEqual({ available: 0, pending: 0, sold: 1 })
  expect((await client.store.listOrders({ status: 'delivered' })).orders).toEqual([
    { ...order, status: 'delivered' },
  ])

  const tom = await client.createPet({ name: 'Tom', categoryId: 2 })
  const stale = await client.updatePet(tom.id, { name: 'Tommy' }).then(() => `"${tom.id}-1"`)
  const refused = await client
    .updatePet(tom.id, { name: 'Thomas' }, { ifMatch: stale })
    .catch((error: unknown) => error)
  expect(refused).toBeInstanceOf(PetstoreError)
  expect((refused as PetstoreError).code).toBe('precondition_failed')
  await client.deletePet(tom.id)
  expect(await client.getPets([tom.id])).toEqual([])

  const standing = await client.getRateLimit()
  expect(standing).toMatchObject({ plan: 'enterprise', scope: 'write', expiresAt: null, bannedUntil: null })

  await t.deps.usage.flush()
  const [today, yesterday, ...rest] = await client.usage({ days: 2 })
  expect(rest).toEqual([])
  expect(today).toMatchObject({ day: new Date(t.clock.now()).toISOString().slice(0, 10), '429': 0 })
  expect(today?.['2xx']).toBeGreaterThan(10)
  expect(today?.['4xx']).toBe(1)
  expect(yesterday).toMatchObject({ '2xx': 0, '4xx': 0, '429': 0, '5xx': 0 })
  expect(await client.usage()).toHaveLength(30)
  const tooLong = await client.usage({ days: 91 }).catch((error: unknown) => error)
  expect(tooLong).toBeInstanceOf(PetstoreError)
  expect(tooLong).toMatchObject({ code: 'invalid_request', status: 400 })
})
