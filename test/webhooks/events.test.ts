import { sql } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { endpointNumberOf } from '../../src/webhooks/endpoints.service.js'
import { onServices } from '../helpers.js'
import { type Receiver, startReceiver, startWebhookApp, type WebhookApp } from './harness.js'

let t: WebhookApp
let buyer: string
let stranger: string
let buyerHook: Receiver
let strangerHook: Receiver

beforeEach(async () => {
  t = await startWebhookApp()
  buyer = await t.issueKey()
  stranger = await t.issueKey()
  buyerHook = await startReceiver()
  strangerHook = await startReceiver()
  for (const [key, receiver] of [
    [buyer, buyerHook],
    [stranger, strangerHook],
  ] as const) {
    const url = `http://hooks.test:${receiver.port}/`
    expect((await t.api(key, 'POST', '/webhook_endpoints', { url, events: ['*'] })).status).toBe(201)
  }
})
afterEach(async () => {
  await t.close()
  await buyerHook.close()
  await strangerHook.close()
})

const typesOf = (received: { body: string }[]) => received.map((r) => JSON.parse(r.body).type).sort()

async function listEvents(key: string, query = '') {
  const response = await t.api(key, 'GET', `/events${query}`)
  expect(response.status).toBe(200)
  return (await response.json()) as {
    id: string
    type: string
    resourceVersion: number
    data: { object: { id: number } }
  }[]
}

describe('events', () => {
  it("sends an order's events to its account only, and pet events to every account", async () => {
    const pet = await (
      await t.api(buyer, 'POST', '/pets', { name: 'Rex', categoryId: 1, status: 'available' })
    ).json()
    const order = await (await t.api(buyer, 'POST', '/store/orders', { petId: pet.id })).json()
    await t.api(buyer, 'PATCH', `/store/orders/${order.id}`, { status: 'approved' })
    await t.api(buyer, 'PATCH', `/store/orders/${order.id}`, { status: 'delivered' })
    const buyerGot = await buyerHook.waitFor(6)
    const strangerGot = await strangerHook.waitFor(3)
    expect(typesOf(buyerGot)).toEqual([
      'order.approved',
      'order.delivered',
      'order.placed',
      'pet.created',
      'pet.updated',
      'pet.updated',
    ])
    expect(typesOf(strangerGot)).toEqual(['pet.created', 'pet.updated', 'pet.updated'])
    expect(typesOf(strangerGot).every((type) => type.startsWith('pet.'))).toBe(true)
    // The pet moved with the order: created (1), pending (2), sold (3).
    const petEvents = (await listEvents(stranger, '?type=pet.updated')).map((e) => [
      e.resourceVersion,
      e.data.object,
    ])
    expect(petEvents).toEqual([
      [2, { ...pet, status: 'pending' }],
      [3, { ...pet, status: 'sold' }],
    ])
    expect((await listEvents(stranger)).some((event) => event.type.startsWith('order.'))).toBe(false)
    const orderEvents = await listEvents(buyer, '?type=order.delivered')
    expect(orderEvents).toMatchObject([
      { resourceVersion: 3, data: { object: { id: order.id, status: 'delivered' } } },
    ])
    expect((await t.api(stranger, 'GET', `/events/${orderEvents[0]?.id}`)).status).toBe(404)
  })

  it('emits nothing for a refused or rolled-back change, and one event per committed one', async () => {
    const pet = await (
      await t.api(buyer, 'POST', '/pets', { name: 'Rex', categoryId: 1, status: 'available' })
    ).json()
    await t.api(buyer, 'POST', '/store/orders', { petId: pet.id })
    // Refused: a second order of a pending pet, a status change while an order is open, deleting it.
    expect((await t.api(buyer, 'POST', '/store/orders', { petId: pet.id })).status).toBe(409)
    expect((await t.api(buyer, 'PATCH', `/pets/${pet.id}`, { status: 'available' })).status).toBe(409)
    // Even to the status it has: while an order is open, only the order moves it (§11).
    expect((await t.api(buyer, 'PATCH', `/pets/${pet.id}`, { status: 'pending' })).status).toBe(409)
    expect((await t.api(buyer, 'DELETE', `/pets/${pet.id}`)).status).toBe(409)
    expect((await t.api(buyer, 'POST', '/pets', { name: '', categoryId: 1 })).status).toBe(400)
    // A replayed create is the same change: no second event.
    const body = { name: 'Tom', categoryId: 2 }
    let tom = { id: 0 }
    for (let i = 0; i < 2; i++) {
      const created = await t.api(buyer, 'POST', '/pets', body, { 'idempotency-key': 'k1' })
      expect(created.status).toBe(201)
      tom = await created.json()
    }
    // A patch that leaves the pet as it is changes nothing (the name is trimmed, as createPet trims it);
    // the next one changes it, once.
    const same = await t.api(buyer, 'PATCH', `/pets/${tom.id}`, {
      name: ' Tom ',
      categoryId: 2,
      status: null,
    })
    expect(same.status).toBe(200)
    expect((await t.api(buyer, 'PATCH', `/pets/${tom.id}`, { name: 'Tommy' })).status).toBe(200)
    const events = await listEvents(buyer)
    expect(events.map((event) => event.type)).toEqual([
      'pet.created',
      'order.placed',
      'pet.updated',
      'pet.created',
      'pet.updated',
    ])
    expect(events.at(-1)).toMatchObject({
      resourceVersion: 2,
      data: { object: { id: tom.id, name: 'Tommy' } },
    })
  })

  it('lists in commit order with ids that sort as text, in pages', async () => {
    for (let index = 0; index < 5; index++)
      await t.api(buyer, 'POST', '/pets', { name: `P${index}`, categoryId: 1 })
    const first = await t.api(buyer, 'GET', '/events?limit=3')
    const page = await first.json()
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1] ?? ''
    const rest = (await (await fetch(next, { headers: { authorization: `Bearer ${buyer}` } })).json()) as {
      id: string
    }[]
    const ids = [...page, ...rest].map((event: { id: string }) => event.id)
    expect(ids).toHaveLength(5)
    expect([...ids].sort()).toEqual(ids)
    expect((await t.api(buyer, 'GET', '/events?cursor=abc')).status).toBe(400)
    expect((await t.api(buyer, 'GET', '/events/evt_1')).status).toBe(400)
    expect((await t.api(buyer, 'GET', '/events/evt_9999999999999999')).status).toBe(404)
  })

  it('lists newest first with order=desc, in pages that go back in time, with a type filter', async () => {
    for (let index = 0; index < 5; index++)
      await t.api(buyer, 'POST', '/pets', { name: `P${index}`, categoryId: 1 })
    await t.api(buyer, 'PATCH', '/pets/1', { name: 'Renamed' })
    const oldestFirst = (await listEvents(buyer, '?limit=100')).map((event) => event.id)
    const first = await t.api(buyer, 'GET', '/events?order=desc&limit=4')
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1] ?? ''
    expect(next).toContain('order=desc')
    const rest = (await (await fetch(next, { headers: { authorization: `Bearer ${buyer}` } })).json()) as {
      id: string
    }[]
    const newestFirst = [...(await first.json()), ...rest].map((event: { id: string }) => event.id)
    expect(newestFirst).toEqual([...oldestFirst].reverse())
    const updated = await listEvents(buyer, '?order=desc&type=pet.updated')
    expect(updated.map((event) => event.type)).toEqual(['pet.updated'])
    expect((await t.api(buyer, 'GET', '/events?order=newest')).status).toBe(400)
  })

  it('redelivers with the same webhook-id and body', async () => {
    await t.api(buyer, 'POST', '/pets', { name: 'Rex', categoryId: 1 })
    const [first] = await buyerHook.waitFor(1)
    const id = first?.headers['webhook-id']
    const response = await t.api(buyer, 'POST', `/events/${id}/redeliver`)
    expect(response.status).toBe(202)
    expect(await response.json()).toMatchObject({ eventId: id, endpointIds: [expect.stringMatching(/^we_/)] })
    const [, again] = await buyerHook.waitFor(2)
    expect(again?.headers['webhook-id']).toBe(id)
    expect(again?.body).toBe(first?.body)
    expect(strangerHook.received.filter((r) => r.headers['webhook-id'] === id)).toHaveLength(1)
    expect((await t.api(buyer, 'POST', `/events/${id}/redeliver`, { endpointId: 'we_999' })).status).toBe(404)
  })

  // PostgreSQL only: on SQLite one transaction writes at a time, so a redelivery cannot run beside a PATCH.
  it.runIf(onServices).each([
    ['the endpoint named', true],
    ['every endpoint subscribed', false],
  ])(
    'a redelivery to %s waits for a disabling transaction that holds its row, then is refused',
    async (_, named) => {
      await t.api(buyer, 'POST', '/pets', { name: 'Rex', categoryId: 1 })
      const id = (await buyerHook.waitFor(1))[0]?.headers['webhook-id']
      const [endpoint] = await (await t.api(buyer, 'GET', '/webhook_endpoints')).json()
      const endpointNumber = endpointNumberOf(endpoint.id)
      const { db } = t.deps.database
      // A disabling PATCH, held open after its UPDATE: it holds the endpoint's row until it commits.
      let commit = () => {}
      const committed = new Promise<void>((resolve) => {
        commit = resolve
      })
      let updated = () => {}
      const holding = new Promise<void>((resolve) => {
        updated = resolve
      })
      const patch = db.transaction().execute(async (trx) => {
        await trx
          .updateTable('webhook_endpoints')
          .set({ status: 'disabled' })
          .where('id', '=', endpointNumber)
          .execute()
        updated()
        await committed
      })
      await holding
      let answered = false
      const answer = t
        .api(buyer, 'POST', `/events/${id}/redeliver`, named ? { endpointId: endpoint.id } : undefined)
        .finally(() => {
          answered = true
        })
      // The redelivery waits on the row (a lock wait in a statement of the account's endpoints), or, were it
      // not to lock, answers while the PATCH is still open.
      const redeliveryWaits = async () => {
        const { rows } = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%api_key_id%'`.execute(
          db,
        )
        return (rows[0]?.n ?? 0) > 0
      }
      await expect
        .poll(async () => answered || (await redeliveryWaits()), { timeout: 10_000, interval: 20 })
        .toBe(true)
      commit()
      await patch
      const response = await answer
      expect(response.status).toBe(409)
      const redelivered = await db
        .selectFrom('webhook_attempts')
        .select('id')
        .where('endpoint_id', '=', endpointNumber)
        .where('redelivery', '=', 1)
        .execute()
      expect(redelivered).toEqual([])
    },
  )
})
