import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { GET_PET_SUNSET_AT } from '../src/pets/pets.deprecation.js'
import { buildTestApp, type TestApp } from './helpers.js'

let t: TestApp
let key: string
beforeAll(async () => {
  t = await buildTestApp()
  key = await t.issueKey()
})
afterAll(() => t.close())

const auth = () => ({ authorization: `Bearer ${key}` })

async function createPet(body: Record<string, unknown>) {
  const response = await t.app.inject({ method: 'POST', url: '/v1/pets', headers: auth(), payload: body })
  expect(response.statusCode).toBe(201)
  return response.json()
}

async function getPage(url: string) {
  const response = await t.app.inject({ method: 'GET', url, headers: auth() })
  expect(response.statusCode).toBe(200)
  const link = response.headers.link as string | undefined
  const next = link ? new URL(/^<([^>]+)>; rel="next"$/.exec(link)?.[1] ?? '') : undefined
  return { pets: response.json() as { id: number; name: string; status?: string }[], next, link }
}

describe('createPet', () => {
  test('returns 201 with the assigned id, the trimmed name and no status when none was given', async () => {
    const pet = await createPet({ name: '  Rex \n', categoryId: 7 })
    expect(pet).toEqual({ id: expect.any(Number), name: 'Rex', categoryId: 7 })
    expect(Object.hasOwn(pet, 'status')).toBe(false)
  })

  test('keeps the status when given and reads back unchanged', async () => {
    const pet = await createPet({ name: 'Tom', categoryId: 9007199254740991, status: 'pending' })
    expect(pet).toEqual({
      id: expect.any(Number),
      name: 'Tom',
      categoryId: 9007199254740991,
      status: 'pending',
    })
    const read = await t.app.inject({ method: 'GET', url: `/v1/pets/${pet.id}`, headers: auth() })
    expect(read.json()).toEqual(pet)
  })

  test('stores any Unicode exactly as sent, without normalisation, up to 100 code points', async () => {
    const decomposed = 'Cafe\u0301 🐕‍🦺'
    expect((await createPet({ name: decomposed, categoryId: 1 })).name).toBe(decomposed)
    const hundredEmoji = '🐈'.repeat(100)
    expect((await createPet({ name: hundredEmoji, categoryId: 1 })).name).toBe(hundredEmoji)
  })

  test('assigns ascending ids in creation order', async () => {
    const ids = []
    for (let i = 0; i < 5; i++) ids.push((await createPet({ name: `Pet ${i}`, categoryId: 1 })).id)
    expect([...ids].sort((a, b) => a - b)).toEqual(ids)
    expect(new Set(ids).size).toBe(5)
  })
})

describe('listPets', () => {
  let fresh: TestApp
  let freshKey: string
  beforeAll(async () => {
    fresh = await buildTestApp({ env: { PETSTORE_PUBLIC_URL: 'https://api.shop.example/v1' } })
    freshKey = await fresh.issueKey()
    const statuses = ['available', 'pending', 'sold', undefined] as const
    for (let i = 1; i <= 45; i++) {
      const status = statuses[i % 4]
      await fresh.deps.pets.createPet({
        apiKeyId: 1,
        newPet: { name: `Pet ${i}`, categoryId: i, ...(status && { status }) },
      })
    }
  })
  afterAll(() => fresh.close())

  const list = async (url: string) => {
    const response = await fresh.app.inject({
      method: 'GET',
      url,
      headers: { authorization: `Bearer ${freshKey}` },
    })
    expect(response.statusCode).toBe(200)
    return response
  }

  test('returns 20 pets by default in ascending id order, with a Link to the next page', async () => {
    const response = await list('/v1/pets')
    const pets = response.json()
    expect(pets.map((pet: { id: number }) => pet.id)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    expect(response.headers.link).toMatch(
      /^<https:\/\/api\.shop\.example\/v1\/pets\?limit=20&cursor=[\w-]+>; rel="next"$/,
    )
  })

  test('follows Link to the last page, which has no Link', async () => {
    const first = await list('/v1/pets?limit=40')
    const next = /<([^>]+)>/.exec(first.headers.link as string)?.[1] ?? ''
    const last = await list(new URL(next).pathname + new URL(next).search)
    expect(last.json().map((pet: { id: number }) => pet.id)).toEqual([41, 42, 43, 44, 45])
    expect(last.headers.link).toBeUndefined()
  })

  test('filters by status and keeps the filter in the next link', async () => {
    const response = await list('/v1/pets?status=sold&limit=3')
    const pets = response.json()
    expect(pets).toHaveLength(3)
    for (const pet of pets) expect(pet.status).toBe('sold')
    expect(response.headers.link).toContain('status=sold')
  })

  test('an exact final page has no Link and limit=100 is allowed', async () => {
    const response = await list('/v1/pets?limit=100')
    expect(response.json()).toHaveLength(45)
    expect(response.headers.link).toBeUndefined()
    const exact = await list('/v1/pets?limit=45')
    expect(exact.headers.link).toBeUndefined()
  })

  test('an edited cursor is 400 invalid_request', async () => {
    const link = (await list('/v1/pets?limit=2')).headers.link as string
    const cursor = new URL(/<([^>]+)>/.exec(link)?.[1] ?? '').searchParams.get('cursor') ?? ''
    const forged = Buffer.from(Buffer.from(cursor, 'base64url').toString().replace(':2:', ':9:')).toString(
      'base64url',
    )
    for (const bad of [forged, `${cursor}x`, cursor.slice(1), `${cursor.slice(0, -1)}A`]) {
      const response = await fresh.app.inject({
        method: 'GET',
        url: `/v1/pets?cursor=${bad}`,
        headers: { authorization: `Bearer ${freshKey}` },
      })
      expect(response.statusCode, bad).toBe(400)
      expect(response.json().code).toBe('invalid_request')
    }
  })
})

test('a walk over all pages sees every pre-existing pet exactly once while others are created', async () => {
  const existing = (await getPage('/v1/pets?limit=100')).pets.map((pet) => pet.id)
  for (let i = 0; i < 30; i++) await createPet({ name: `Walk ${i}`, categoryId: 2 })
  const before = (await t.deps.pets.listPets({ limit: 100 })).items.map((pet) => pet.id)
  expect(before.length).toBeGreaterThan(existing.length)

  const seen: number[] = []
  let url: string | undefined = '/v1/pets?limit=7'
  while (url) {
    const concurrentCreates = Array.from({ length: 3 }, (_, i) =>
      createPet({ name: `During ${i}`, categoryId: 3 }),
    )
    const [page]: [Awaited<ReturnType<typeof getPage>>, ...unknown[]] = await Promise.all([
      getPage(url),
      ...concurrentCreates,
    ])
    seen.push(...page.pets.map((pet) => pet.id))
    url = page.next && page.next.pathname + page.next.search
  }
  expect(new Set(seen).size).toBe(seen.length)
  expect([...seen].sort((a, b) => a - b)).toEqual(seen)
  for (const id of before) expect(seen).toContain(id)
})

describe('getPet, deprecated', () => {
  test('carries Deprecation, Sunset and a successor-version Link on 200 and 404', async () => {
    const pet = await createPet({ name: 'Old', categoryId: 1 })
    for (const id of [pet.id, 999999, 'abc']) {
      const response = await t.app.inject({ method: 'GET', url: `/v1/pets/${id}`, headers: auth() })
      expect(response.headers.deprecation).toBe('@1767225600')
      expect(response.headers.sunset).toBe('Thu, 05 Dec 2030 00:00:00 GMT')
      // The listing of that one pet; a path that names no id in canonical form gets the listing itself.
      const successor = typeof id === 'number' ? `/v1/pets?id=${id}` : '/v1/pets'
      expect(response.headers.link).toBe(`<http://localhost:80${successor}>; rel="successor-version"`)
    }
  })

  test('a response that fails authentication carries no deprecation headers', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/v1/pets/1' })
    expect(response.statusCode).toBe(401)
    expect(response.headers.deprecation).toBeUndefined()
  })

  test('answers until the sunset instant and 410 gone from it on', async () => {
    const pet = await createPet({ name: 'Sunset', categoryId: 1 })
    try {
      t.clock.set(GET_PET_SUNSET_AT - 1)
      expect(
        (await t.app.inject({ method: 'GET', url: `/v1/pets/${pet.id}`, headers: auth() })).statusCode,
      ).toBe(200)
      t.clock.set(GET_PET_SUNSET_AT)
      const gone = await t.app.inject({ method: 'GET', url: `/v1/pets/${pet.id}`, headers: auth() })
      expect(gone.statusCode).toBe(410)
      expect(gone.json()).toMatchObject({ code: 'gone', status: 410 })
      expect(gone.headers.sunset).toBe('Thu, 05 Dec 2030 00:00:00 GMT')
      const list = await t.app.inject({ method: 'GET', url: '/v1/pets?limit=1', headers: auth() })
      expect(list.statusCode).toBe(200)
    } finally {
      t.clock.set(Date.UTC(2027, 0, 1))
    }
  })
})
