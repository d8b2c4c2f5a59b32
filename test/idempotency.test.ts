import { beforeEach, describe, expect, test } from 'vitest'
import { IDEMPOTENCY_TTL_MS } from '../src/idempotency/idempotency.js'
import { build, countPets, operatorConnection, type TestApp } from './helpers.js'

let t: TestApp
let key: string
// A fresh app per test: the tests change pets, orders, keys and windows the next one would see.
beforeEach(async (context) => {
  t = await build(context)
  key = await t.issueKey()
})

function create(body: unknown, idempotencyKey?: string | string[], apiKey = key) {
  return t.app.inject({
    method: 'POST',
    url: '/v1/pets',
    headers: {
      authorization: `Bearer ${apiKey}`,
      'content-type': 'application/json',
      ...(idempotencyKey !== undefined && { 'idempotency-key': idempotencyKey }),
    },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

const petCount = () => countPets(t)

describe('Idempotency-Key on createPet', () => {
  test('the same key and body returns the first pet again with Idempotent-Replayed and creates nothing', async () => {
    const first = await create({ name: 'Rex', categoryId: 1 }, 'order-1')
    expect(first.statusCode).toBe(201)
    expect(first.headers['idempotent-replayed']).toBeUndefined()
    const before = await petCount()
    // Same fields in another order and spacing: the same body.
    const again = await create('{ "categoryId": 1, "name": "Rex" }', 'order-1')
    expect(again.statusCode).toBe(201)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.json()).toEqual(first.json())
    expect(await petCount()).toBe(before)
  })

  test('the same key with a different body is 422 idempotency_key_reused and creates nothing', async () => {
    await create({ name: 'Rex', categoryId: 1 }, 'order-2')
    const before = await petCount()
    const reused = await create({ name: 'Rex', categoryId: 2 }, 'order-2')
    expect(reused.statusCode).toBe(422)
    expect(reused.json()).toMatchObject({ code: 'idempotency_key_reused', status: 422 })
    expect(await petCount()).toBe(before)
  })

  test('keys are scoped to the API key', async () => {
    const otherKey = await t.issueKey('pro')
    const mine = await create({ name: 'Rex', categoryId: 1 }, 'shared-key')
    const theirs = await create({ name: 'Rex', categoryId: 1 }, 'shared-key', otherKey)
    expect(theirs.statusCode).toBe(201)
    expect(theirs.headers['idempotent-replayed']).toBeUndefined()
    expect(theirs.json().id).not.toBe(mine.json().id)
  })

  test('a record is kept for 24 hours, then the key creates a new pet', async () => {
    const first = await create({ name: 'Rex', categoryId: 1 }, 'order-3')
    t.clock.advance(IDEMPOTENCY_TTL_MS - 1)
    expect((await create({ name: 'Rex', categoryId: 1 }, 'order-3')).json().id).toBe(first.json().id)
    t.clock.advance(1)
    const later = await create({ name: 'Rex', categoryId: 5 }, 'order-3')
    expect(later.statusCode).toBe(201)
    expect(later.headers['idempotent-replayed']).toBeUndefined()
    expect(later.json().id).toBeGreaterThan(first.json().id)
  })

  test('expired records are purged', async () => {
    await create({ name: 'Rex', categoryId: 1 }, 'order-4')
    t.clock.advance(IDEMPOTENCY_TTL_MS + 1)
    expect(await t.deps.pets.purgeExpiredIdempotencyKeys()).toBeGreaterThanOrEqual(1)
    const left = await t.deps.database.db
      .selectFrom('idempotency_keys')
      .select('key')
      .where('key', '=', 'order-4')
      .execute()
    expect(left).toEqual([])
  })

  test.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['non-ASCII', 'clé-1'],
    ['a control character', 'a\u0001b'],
  ])('an Idempotency-Key that is %s is 400 and creates nothing', async (_label, value) => {
    const before = await petCount()
    const response = await create({ name: 'Rex', categoryId: 1 }, value)
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject({ code: 'invalid_request' })
    expect(response.json().message).toContain('Idempotency-Key')
    expect(await petCount()).toBe(before)
  })

  test('an Idempotency-Key sent twice is 400, not the joined "k1, k1"', async () => {
    const before = await petCount()
    const response = await create({ name: 'Rex', categoryId: 1 }, ['k1', 'k1'])
    expect(response.statusCode).toBe(400)
    expect(response.json().message).toBe('Idempotency-Key must be sent once')
    expect(await petCount()).toBe(before)
  })

  test('255 printable characters are a valid key', async () => {
    const printable = Array.from({ length: 255 }, (_, i) => String.fromCharCode(0x21 + (i % 94))).join('')
    expect((await create({ name: 'Rex', categoryId: 1 }, printable)).statusCode).toBe(201)
  })

  test('any number of concurrent requests with one key create exactly one pet, and every other one is its replay', async () => {
    const before = await petCount()
    const responses = await Promise.all(
      Array.from({ length: 25 }, () => create({ name: 'Burst', categoryId: 4, status: 'sold' }, 'burst-1')),
    )
    expect(await petCount()).toBe(before + 1)
    // A duplicate waits on the first one's claim and then finds its record: never 409 (the claim, the pet and
    // the record commit together, so no marker is ever seen without what it made).
    expect(responses.map((response) => response.statusCode)).toEqual(Array(25).fill(201))
    expect(new Set(responses.map((response) => response.json().id)).size).toBe(1)
    const firsts = responses.filter((response) => response.headers['idempotent-replayed'] === undefined)
    expect(firsts).toHaveLength(1)
  })

  test('a replay is the first response as first sent, after the pet changed and after it was deleted', async () => {
    const first = await create({ name: 'Rex', categoryId: 1, status: 'available' }, 'then-gone')
    const pet = first.json()
    const auth = { authorization: `Bearer ${key}` }
    const patched = await t.app.inject({
      method: 'PATCH',
      url: `/v1/pets/${pet.id}`,
      headers: { ...auth, 'content-type': 'application/merge-patch+json' },
      payload: { name: 'Renamed' },
    })
    expect(patched.statusCode).toBe(200)
    const afterChange = await create({ name: 'Rex', categoryId: 1, status: 'available' }, 'then-gone')
    expect(afterChange.statusCode).toBe(201)
    expect(afterChange.json()).toEqual(pet)
    expect(afterChange.headers.etag).toBe(first.headers.etag)
    expect(
      (await t.app.inject({ method: 'DELETE', url: `/v1/pets/${pet.id}`, headers: auth })).statusCode,
    ).toBe(204)
    const afterDelete = await create({ name: 'Rex', categoryId: 1, status: 'available' }, 'then-gone')
    expect(afterDelete.statusCode).toBe(201)
    expect(afterDelete.headers['idempotent-replayed']).toBe('true')
    expect(afterDelete.headers.location).toBe(first.headers.location)
    expect(afterDelete.json()).toEqual(pet)
  })

  test('a record from before bodies were kept whose pet is gone is a 404 saying so, never a retry-me 409', async () => {
    const pet = (await create({ name: 'Old', categoryId: 1 }, 'pre-0010')).json()
    const operator = await operatorConnection(t)
    try {
      await operator.exec(`update idempotency_keys set response = null where key = 'pre-0010'`)
    } finally {
      await operator.close()
    }
    const auth = { authorization: `Bearer ${key}` }
    await t.app.inject({ method: 'DELETE', url: `/v1/pets/${pet.id}`, headers: auth })
    const replay = await create({ name: 'Old', categoryId: 1 }, 'pre-0010')
    expect(replay.statusCode).toBe(404)
    expect(replay.json()).toMatchObject({
      code: 'not_found',
      message: `pet ${pet.id}, which this Idempotency-Key created, was deleted`,
    })
  })
})

describe('one flow for every operation that takes an Idempotency-Key', () => {
  const placeOrder = (petId: number, idempotencyKey: string | string[]) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/store/orders',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'idempotency-key': idempotencyKey,
      },
      payload: { petId },
    })

  test('an order replayed after it moved on is the first response as first sent', async () => {
    const pet = (await create({ name: 'Sold', categoryId: 1, status: 'available' })).json()
    const first = await placeOrder(pet.id, 'order-then-cancelled')
    expect(first.statusCode).toBe(201)
    const cancelled = await t.app.inject({
      method: 'PATCH',
      url: `/v1/store/orders/${first.json().id}`,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: { status: 'cancelled' },
    })
    expect(cancelled.json().status).toBe('cancelled')
    const replay = await placeOrder(pet.id, 'order-then-cancelled')
    expect(replay.statusCode).toBe(201)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.json()).toEqual(first.json())
  })

  test('an order from a record before bodies were kept is replayed as it is now', async () => {
    const pet = (await create({ name: 'Older', categoryId: 1, status: 'available' })).json()
    const first = await placeOrder(pet.id, 'pre-0010-order')
    const operator = await operatorConnection(t)
    try {
      await operator.exec(`update idempotency_keys set response = null where key = 'pre-0010-order'`)
    } finally {
      await operator.close()
    }
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
    const url = `/v1/store/orders/${first.json().id}`
    await t.app.inject({ method: 'PATCH', url, headers: auth, payload: { status: 'cancelled' } })
    const replay = await placeOrder(pet.id, 'pre-0010-order')
    expect(replay.statusCode).toBe(201)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.json()).toEqual({ ...first.json(), status: 'cancelled' })
  })

  test('createPet and placeOrder refuse a reused key and a key sent twice with the same words', async () => {
    const pet = (await create({ name: 'Shared', categoryId: 1, status: 'available' })).json()
    const other = (await create({ name: 'Other', categoryId: 1, status: 'available' })).json()
    await create({ name: 'Rex', categoryId: 1 }, 'shared-flow-1')
    const petReused = await create({ name: 'Max', categoryId: 1 }, 'shared-flow-1')
    expect((await placeOrder(pet.id, 'shared-flow-2')).statusCode).toBe(201)
    const orderReused = await placeOrder(other.id, 'shared-flow-2')
    expect([petReused.statusCode, orderReused.statusCode]).toEqual([422, 422])
    expect(orderReused.json().message).toBe(petReused.json().message)
    // A key used for one operation is another request for the other.
    expect((await placeOrder(pet.id, 'shared-flow-1')).json().code).toBe('idempotency_key_reused')
    const twice = await placeOrder(other.id, ['k', 'k'])
    expect(twice.json()).toMatchObject({
      code: 'invalid_request',
      message: 'Idempotency-Key must be sent once',
    })
  })
})
