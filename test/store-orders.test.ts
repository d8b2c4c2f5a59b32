import { beforeEach, describe, expect, test } from 'vitest'
import { build, type TestApp } from './helpers.js'

/** Store orders and the inventory (CONTRACT §11) through the API. SQLite in `npm test`, PostgreSQL in services. */
let t: TestApp
let key: string
let other: string
// A fresh app per test: the tests change pets, orders, keys and windows the next one would see.
beforeEach(async (context) => {
  t = await build(context)
  key = await t.issueKey()
  other = await t.issueKey()
})

const send = (
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  as = key,
  payload?: object,
  headers = {},
) =>
  t.app.inject({
    method,
    url,
    headers: { ...t.auth(as), ...(payload && { 'content-type': 'application/json' }), ...headers },
    ...(payload && { payload }),
  })
const newPet = async (status = 'available') =>
  (await send('POST', '/v1/pets', key, { name: 'Rex', categoryId: 1, status })).json() as { id: number }
const petStatus = async (id: number) => (await send('GET', `/v1/pets?id=${id}`)).json()[0]?.status
const order = (petId: number, as = key, headers = {}) =>
  send('POST', '/v1/store/orders', as, { petId }, headers)
const move = (id: number, status: string, as = key) => send('PATCH', `/v1/store/orders/${id}`, as, { status })

describe('placing an order', () => {
  test('places it (Location names it), sets the pet pending, and refuses a second order for the same pet', async () => {
    const pet = await newPet()
    const placed = await order(pet.id)
    expect(placed.statusCode).toBe(201)
    expect(placed.json()).toEqual({
      id: expect.any(Number),
      petId: pet.id,
      status: 'placed',
      createdAt: new Date(t.clock.now()).toISOString(),
    })
    expect(placed.headers.location).toBe(`http://localhost:80/v1/store/orders/${placed.json().id}`)
    expect((await send('GET', new URL(String(placed.headers.location)).pathname)).json()).toEqual(
      placed.json(),
    )
    expect(await petStatus(pet.id)).toBe('pending')
    const again = await order(pet.id, other)
    expect(again.statusCode).toBe(409)
    expect(again.json()).toMatchObject({
      code: 'pet_unavailable',
      message: expect.stringContaining('is pending'),
    })
    expect((await order(424242)).json()).toMatchObject({
      code: 'pet_unavailable',
      message: expect.stringContaining('does not exist'),
    })
    expect((await order((await newPet('sold')).id)).statusCode).toBe(409)
  })

  test('ten concurrent orders for one pet: exactly one is placed', async () => {
    const pet = await newPet()
    const responses = await Promise.all(Array.from({ length: 10 }, () => order(pet.id)))
    const statuses = responses.map((response) => response.statusCode).sort()
    expect(statuses).toEqual([201, ...Array(9).fill(409)])
    const listed = (await send('GET', '/v1/store/orders?limit=100')).json() as Array<{ petId: number }>
    expect(listed.filter((entry) => entry.petId === pet.id)).toHaveLength(1)
  })

  test('an Idempotency-Key replays the first order; with another pet it is a 422', async () => {
    const pet = await newPet()
    const headers = { 'idempotency-key': 'buy-rex' }
    const first = await order(pet.id, key, headers)
    const replay = await order(pet.id, key, headers)
    expect(replay.statusCode).toBe(201)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.json()).toEqual(first.json())
    expect((await order((await newPet()).id, key, headers)).statusCode).toBe(422)
  })

  test('five concurrent orders with one Idempotency-Key: one order, four replays, never a 409', async () => {
    const pet = await newPet()
    const headers = { 'idempotency-key': 'buy-once' }
    const responses = await Promise.all(Array.from({ length: 5 }, () => order(pet.id, key, headers)))
    expect(responses.map((response) => response.statusCode)).toEqual([201, 201, 201, 201, 201])
    expect(new Set(responses.map((response) => response.json().id)).size).toBe(1)
    const replays = responses.filter((response) => response.headers['idempotent-replayed'] === 'true')
    expect(replays).toHaveLength(4)
  })

  test('a read key may look but not order', async () => {
    const reader = await t.issueKey('free', undefined, 'read')
    expect((await order((await newPet()).id, reader)).statusCode).toBe(403)
    expect((await send('GET', '/v1/store/orders', reader)).statusCode).toBe(200)
    expect((await send('GET', '/v1/store/inventory', reader)).statusCode).toBe(200)
  })
})

describe('moving an order on', () => {
  test('placed → approved → delivered sells the pet; anything else is 409 naming the status', async () => {
    const pet = await newPet()
    const { id } = (await order(pet.id)).json()
    expect((await move(id, 'delivered')).json()).toMatchObject({
      code: 'invalid_transition',
      message: `order ${id} is placed: it cannot become delivered`,
    })
    expect((await move(id, 'approved')).json()).toMatchObject({ id, status: 'approved' })
    expect(await petStatus(pet.id)).toBe('pending')
    expect((await move(id, 'delivered')).json()).toMatchObject({ status: 'delivered' })
    expect(await petStatus(pet.id)).toBe('sold')
    for (const status of ['cancelled', 'placed', 'approved'])
      expect((await move(id, status)).statusCode).toBe(409)
    expect((await move(id, 'lost')).statusCode).toBe(400)
  })

  test('cancelling from placed or approved makes the pet available again, so it can be ordered anew', async () => {
    const pet = await newPet()
    const first = (await order(pet.id)).json()
    expect((await move(first.id, 'cancelled')).json().status).toBe('cancelled')
    expect(await petStatus(pet.id)).toBe('available')
    const second = (await order(pet.id)).json()
    await move(second.id, 'approved')
    await move(second.id, 'cancelled')
    expect(await petStatus(pet.id)).toBe('available')
  })

  test("another account's order is a 404, never a 403; lists hold only the caller's orders", async () => {
    const mine = (await order((await newPet()).id)).json()
    const theirs = (await order((await newPet()).id, other)).json()
    expect((await send('GET', `/v1/store/orders/${theirs.id}`)).statusCode).toBe(404)
    expect((await move(theirs.id, 'cancelled')).statusCode).toBe(404)
    expect((await send('GET', `/v1/store/orders/${mine.id}`)).json()).toEqual(mine)
    const listed = (await send('GET', '/v1/store/orders?limit=100')).json() as Array<{ id: number }>
    expect(listed.map((entry) => entry.id)).toContain(mine.id)
    expect(listed.map((entry) => entry.id)).not.toContain(theirs.id)
  })

  test('the list pages with Link rel="next" and filters by status', async () => {
    const account = await t.issueKey()
    for (let i = 0; i < 3; i++) await order((await newPet()).id, account)
    const first = await send('GET', '/v1/store/orders?limit=2', account)
    expect(first.json()).toHaveLength(2)
    const next = /<([^>]+)>; rel="next"/.exec(String(first.headers.link))?.[1] ?? ''
    const second = await send('GET', next.slice(next.indexOf('/v1/')), account)
    expect(second.json()).toHaveLength(1)
    expect(second.headers.link).toBeUndefined()
    expect((await send('GET', '/v1/store/orders?status=delivered', account)).json()).toEqual([])
    expect((await send('GET', '/v1/store/orders?cursor=bogus', account)).statusCode).toBe(400)
  })
})

describe('one sale per pet (CONTRACT §11)', () => {
  const setStatus = (petId: number, status: string | null, as = other) =>
    send('PATCH', `/v1/pets/${petId}`, as, { status })

  test("while an order is open, a PATCH of the pet's status is 409 and changes nothing; its name may change", async () => {
    const pet = await newPet()
    const placed = (await order(pet.id)).json()
    for (const status of ['available', 'sold', 'pending', null]) {
      const refused = await setStatus(pet.id, status)
      expect(refused.statusCode, String(status)).toBe(409)
      expect(refused.json()).toMatchObject({
        code: 'conflict',
        message: expect.stringContaining('open order'),
      })
    }
    expect(await petStatus(pet.id)).toBe('pending')
    // B cannot sneak in a second order: the pet is still pending.
    expect((await order(pet.id, other)).json()).toMatchObject({ code: 'pet_unavailable' })
    const renamed = await send('PATCH', `/v1/pets/${pet.id}`, other, { name: 'Rex II', categoryId: 7 })
    expect(renamed.statusCode).toBe(200)
    expect(renamed.json()).toMatchObject({ name: 'Rex II', categoryId: 7, status: 'pending' })
    await move(placed.id, 'approved')
    expect((await setStatus(pet.id, 'available')).statusCode).toBe(409)
  })

  test('the sequence that sold a pet twice: A orders, B resets the status, B orders, A delivers', async () => {
    const pet = await newPet()
    const a = (await order(pet.id)).json()
    expect((await setStatus(pet.id, 'available')).statusCode).toBe(409)
    expect((await order(pet.id, other)).statusCode).toBe(409)
    await move(a.id, 'approved')
    expect((await move(a.id, 'delivered')).statusCode).toBe(200)
    expect(await petStatus(pet.id)).toBe('sold')
    // Once delivered, the pet stays sold: it cannot be put back on sale and sold again.
    const relisted = await setStatus(pet.id, 'available')
    expect(relisted.statusCode).toBe(409)
    expect(relisted.json().message).toContain('sold by an order')
    expect((await order(pet.id, other)).statusCode).toBe(409)
  })

  test("after a cancellation, the status is the owner's again", async () => {
    const pet = await newPet()
    const a = (await order(pet.id)).json()
    await move(a.id, 'cancelled')
    expect(await petStatus(pet.id)).toBe('available')
    expect((await setStatus(pet.id, 'sold')).statusCode).toBe(200)
    expect((await setStatus(pet.id, null)).statusCode).toBe(200)
    expect(await petStatus(pet.id)).toBeUndefined()
  })

  test('orders, deletes and status changes racing for one pet never leave two open or two delivered orders', async () => {
    for (let round = 0; round < 5; round++) {
      const pet = await newPet()
      const accounts = [key, other]
      const racing = await Promise.all([
        ...Array.from({ length: 6 }, (_, i) => order(pet.id, accounts[i % 2])),
        ...Array.from({ length: 2 }, () => send('DELETE', `/v1/pets/${pet.id}`)),
        setStatus(pet.id, 'available'),
        setStatus(pet.id, null),
      ])
      for (const response of racing) expect(response.statusCode).toBeLessThan(500)
      const placed = racing.filter((r) => r.statusCode === 201 && r.json().petId === pet.id)
      expect(placed.length).toBeLessThanOrEqual(1)
    }
  })
})

test('a pet with an open order cannot be deleted (409 conflict); once delivered it can', async () => {
  const pet = await newPet()
  const { id } = (await order(pet.id)).json()
  const refused = await send('DELETE', `/v1/pets/${pet.id}`)
  expect(refused.statusCode).toBe(409)
  expect(refused.json().code).toBe('conflict')
  await move(id, 'approved')
  await move(id, 'delivered')
  expect((await send('DELETE', `/v1/pets/${pet.id}`)).statusCode).toBe(204)
})

test('the inventory counts live pets by status and follows every change', async () => {
  const before = (await send('GET', '/v1/store/inventory')).json()
  expect(Object.keys(before).sort()).toEqual(['available', 'pending', 'sold'])
  const pet = await newPet()
  await newPet('sold')
  await send('POST', '/v1/pets', key, { name: 'No status', categoryId: 1 })
  const { id } = (await order(pet.id)).json()
  const after = (await send('GET', '/v1/store/inventory')).json()
  expect(after).toEqual({ available: before.available, pending: before.pending + 1, sold: before.sold + 1 })
  await move(id, 'cancelled')
  await send('DELETE', `/v1/pets/${pet.id}`)
  expect((await send('GET', '/v1/store/inventory')).json()).toEqual({ ...after, pending: after.pending - 1 })
})
