import { beforeEach, describe, expect, test } from 'vitest'
import { build, type TestApp } from './helpers.js'

/** Pet lifecycle (CONTRACT §11): by-id listing, ETags, PATCH with If-Match, DELETE. SQLite and services. */
let t: TestApp
let key: string
// A fresh app per test: the tests change pets, orders, keys and windows the next one would see.
beforeEach(async (context) => {
  t = await build(context, { env: { CORS_ORIGINS: 'https://shop.example' } })
  key = await t.issueKey()
})

const json = (headers: Record<string, string> = {}) => ({
  ...t.auth(key),
  'content-type': 'application/json',
  ...headers,
})
const create = async (pet: object) => {
  const response = await t.app.inject({ method: 'POST', url: '/v1/pets', headers: json(), payload: pet })
  expect(response.statusCode).toBe(201)
  return { pet: response.json(), etag: response.headers.etag as string }
}
const get = (id: number) => t.app.inject({ method: 'GET', url: `/v1/pets/${id}`, headers: t.auth(key) })
const patch = (id: number, payload: unknown, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'PATCH',
    url: `/v1/pets/${id}`,
    headers: json(headers),
    payload: JSON.stringify(payload),
  })
const byIds = (query: string) =>
  t.app.inject({ method: 'GET', url: `/v1/pets?${query}`, headers: t.auth(key) })

describe('GET /v1/pets?id=', () => {
  test('gives those of the ids that exist, ascending, with the status filter if given', async () => {
    const a = (await create({ name: 'A', categoryId: 1, status: 'available' })).pet
    const b = (await create({ name: 'B', categoryId: 1, status: 'sold' })).pet
    const response = await byIds(`id=${b.id},424242,${a.id},${a.id}`)
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual([a, b])
    expect((await byIds(`id=${a.id},${b.id}&status=sold`)).json()).toEqual([b])
  })

  test("naming one pet, it carries getPet's ETag, which works in If-Match; naming more, none", async () => {
    const { pet } = await create({ name: 'Rex', categoryId: 1 })
    const other = (await create({ name: 'Tom', categoryId: 1 })).pet
    const one = await byIds(`id=${pet.id}`)
    expect(one.json()).toEqual([pet])
    expect(one.headers.etag).toBe((await get(pet.id)).headers.etag)
    expect((await patch(pet.id, { name: 'Rexa' }, { 'if-match': String(one.headers.etag) })).statusCode).toBe(
      200,
    )
    expect((await byIds(`id=${pet.id}`)).headers.etag).not.toBe(one.headers.etag)
    expect((await byIds(`id=${pet.id},${other.id}`)).headers.etag).toBeUndefined()
    expect((await byIds('id=424242')).headers.etag).toBeUndefined()
  })

  test.each([
    ['id=', 400],
    ['id=0', 400],
    ['id=1,,2', 400],
    ['id=a', 400],
    [`id=${Array.from({ length: 101 }, (_, i) => i + 1).join(',')}`, 400],
    ['id=9007199254740992', 400],
    ['id=1&cursor=abc', 400],
  ])('%s is a 400', async (query, status) => {
    const response = await byIds(query)
    expect(response.statusCode).toBe(status)
    expect(response.json()).toMatchObject({ code: 'invalid_request' })
  })
})

describe('ETag and PATCH', () => {
  test('single-pet responses carry an ETag that changes with the pet', async () => {
    const { pet, etag } = await create({ name: 'Rex', categoryId: 1 })
    expect(etag).toMatch(/^"\d+-1"$/)
    expect((await get(pet.id)).headers.etag).toBe(etag)
    const changed = await patch(pet.id, { status: 'pending' }, { 'if-match': etag })
    expect(changed.statusCode).toBe(200)
    expect(changed.json()).toEqual({ ...pet, status: 'pending' })
    expect(changed.headers.etag).not.toBe(etag)
    expect((await get(pet.id)).headers.etag).toBe(changed.headers.etag)
  })

  test('a patch that leaves every field as it is keeps the ETag; a stale If-Match is still a 412', async () => {
    const { pet, etag } = await create({ name: 'Rex', categoryId: 1, status: 'available' })
    const same = await patch(
      pet.id,
      { name: '  Rex ', categoryId: 1, status: 'available' },
      { 'if-match': etag },
    )
    expect(same.statusCode).toBe(200)
    expect(same.json()).toEqual(pet)
    expect(same.headers.etag).toBe(etag)
    expect((await get(pet.id)).headers.etag).toBe(etag)
    const changed = await patch(pet.id, { status: null })
    expect(changed.headers.etag).toBe(`"${pet.id}-2"`)
    const stale = await patch(pet.id, { status: null }, { 'if-match': etag })
    expect(stale.statusCode).toBe(412)
    expect(
      (await patch(pet.id, { status: null }, { 'if-match': changed.headers.etag as string })).statusCode,
    ).toBe(200)
  })

  test('of concurrent patches naming the same ETag, exactly one changes the pet; the others are 412', async () => {
    const { pet, etag } = await create({ name: 'Rex', categoryId: 1 })
    const names = Array.from({ length: 8 }, (_, index) => `Rex ${index}`)
    const answers = await Promise.all(names.map((name) => patch(pet.id, { name }, { 'if-match': etag })))
    const statuses = answers.map((answer) => answer.statusCode).sort()
    expect(statuses).toEqual([200, ...Array(7).fill(412)])
    const winner = answers.find((answer) => answer.statusCode === 200)
    expect((await get(pet.id)).json().name).toBe(winner?.json().name)
    expect(winner?.headers.etag).toBe(`"${pet.id}-2"`)
  })

  test('every 201 names where to read the pet; a replayed createPet is the first response as sent, its ETag too', async () => {
    const headers = json({ 'idempotency-key': 'create-rex-once' })
    const send = () =>
      t.app.inject({ method: 'POST', url: '/v1/pets', headers, payload: { name: 'Rex', categoryId: 1 } })
    const first = await send()
    const pet = first.json()
    expect(first.headers.location).toBe(`http://localhost:80/v1/pets?id=${pet.id}`)
    expect(first.headers.etag).toBe(`"${pet.id}-1"`)
    const changed = await patch(pet.id, { status: 'sold' })
    expect(changed.headers.etag).toBe(`"${pet.id}-2"`)
    const replay = await send()
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.headers.location).toBe(first.headers.location)
    expect(replay.headers.etag).toBe(first.headers.etag)
    expect(replay.json()).toEqual(pet)
  })

  test('a stale If-Match is 412 and changes nothing; * and a list with the current tag pass', async () => {
    const { pet, etag } = await create({ name: 'Rex', categoryId: 1 })
    const first = await patch(pet.id, { name: '  Max  ' }, { 'if-match': etag })
    expect(first.json().name).toBe('Max')
    const stale = await patch(pet.id, { name: 'Stale' }, { 'if-match': etag })
    expect(stale.statusCode).toBe(412)
    expect(stale.json()).toMatchObject({ code: 'precondition_failed', status: 412 })
    expect((await get(pet.id)).json().name).toBe('Max')
    const weak = await patch(pet.id, { name: 'Weak' }, { 'if-match': `W/${first.headers.etag}` })
    expect(weak.statusCode).toBe(412)
    const listed = await patch(pet.id, { categoryId: 9 }, { 'if-match': `"nope", ${first.headers.etag}` })
    expect(listed.statusCode).toBe(200)
    expect((await patch(pet.id, { status: null }, { 'if-match': '*' })).json()).toEqual({
      id: pet.id,
      name: 'Max',
      categoryId: 9,
    })
  })

  test('merge-patch+json is taken; createPet rules apply; an empty patch or an unknown field is a 400', async () => {
    const { pet } = await create({ name: 'Rex', categoryId: 1, status: 'available' })
    const merge = await patch(pet.id, { status: 'sold' }, { 'content-type': 'application/merge-patch+json' })
    expect(merge.json().status).toBe('sold')
    for (const body of [
      {},
      { name: '' },
      { name: null },
      { categoryId: 0 },
      { colour: 'red' },
      { status: 'lost' },
    ]) {
      const refused = await patch(pet.id, body)
      expect(refused.statusCode, JSON.stringify(body)).toBe(400)
      expect(refused.json().code).toBe('invalid_request')
    }
    expect((await get(pet.id)).json()).toEqual({ ...pet, status: 'sold' })
    expect((await patch(424242, { name: 'Ghost' })).statusCode).toBe(404)
  })

  test('a read key gets 403 for PATCH and DELETE', async () => {
    const { pet } = await create({ name: 'Rex', categoryId: 1 })
    const reader = await t.issueKey('free', undefined, 'read')
    const headers = { ...t.auth(reader), 'content-type': 'application/json' }
    const refused = await t.app.inject({
      method: 'PATCH',
      url: `/v1/pets/${pet.id}`,
      headers,
      payload: { name: 'X' },
    })
    expect(refused.statusCode).toBe(403)
    expect(
      (await t.app.inject({ method: 'DELETE', url: `/v1/pets/${pet.id}`, headers: t.auth(reader) }))
        .statusCode,
    ).toBe(403)
  })
})

describe('DELETE', () => {
  test('204, then the pet is a 404 everywhere and absent from listings; its id is never given again', async () => {
    const { pet } = await create({ name: 'Gone', categoryId: 1, status: 'available' })
    const deleted = await t.app.inject({ method: 'DELETE', url: `/v1/pets/${pet.id}`, headers: t.auth(key) })
    expect(deleted.statusCode).toBe(204)
    expect(deleted.body).toBe('')
    expect((await get(pet.id)).statusCode).toBe(404)
    expect((await patch(pet.id, { name: 'Back' })).statusCode).toBe(404)
    expect(
      (await t.app.inject({ method: 'DELETE', url: `/v1/pets/${pet.id}`, headers: t.auth(key) })).statusCode,
    ).toBe(404)
    expect((await byIds(`id=${pet.id}`)).json()).toEqual([])
    const listed = await t.app.inject({
      method: 'GET',
      url: '/v1/pets?limit=100&status=available',
      headers: t.auth(key),
    })
    expect(listed.json().map((p: { id: number }) => p.id)).not.toContain(pet.id)
    const next = await create({ name: 'Next', categoryId: 1 })
    expect(next.pet.id).toBeGreaterThan(pet.id)
  })

  test('PUT is still a 405 naming what exists', async () => {
    const response = await t.app.inject({ method: 'PUT', url: '/v1/pets/1', headers: t.auth(key) })
    expect(response.statusCode).toBe(405)
    expect(response.headers.allow).toBe('GET, HEAD, PATCH, DELETE')
  })
})

test('a browser page may PATCH and DELETE with If-Match, and read the ETag', async () => {
  const preflight = await t.app.inject({
    method: 'OPTIONS',
    url: '/v1/pets/1',
    headers: {
      origin: 'https://shop.example',
      'access-control-request-method': 'PATCH',
      'access-control-request-headers': 'authorization, content-type, if-match',
    },
  })
  expect(preflight.statusCode).toBe(204)
  expect(preflight.headers['access-control-allow-methods']).toContain('PATCH')
  expect(preflight.headers['access-control-allow-methods']).toContain('DELETE')
  expect(String(preflight.headers['access-control-allow-headers']).toLowerCase()).toContain('if-match')
  const { pet } = await create({ name: 'Seen', categoryId: 1 })
  const response = await t.app.inject({
    method: 'GET',
    url: `/v1/pets/${pet.id}`,
    headers: { ...t.auth(key), origin: 'https://shop.example' },
  })
  expect(String(response.headers['access-control-expose-headers'])).toContain('ETag')
  expect(String(response.headers['access-control-expose-headers'])).toContain('Location')
})
