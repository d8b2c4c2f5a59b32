import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { MIGRATION_NAMES } from '../../src/db/migrate.js'
import { createDeps } from '../../src/deps.js'
import { buildTestApp, countPets, type TestApp } from '../helpers.js'
import { createTestDatabase } from './test-stores.js'

let database: Awaited<ReturnType<typeof createTestDatabase>>
let t: TestApp
let key: string
beforeAll(async () => {
  database = await createTestDatabase()
  t = await buildTestApp({ env: { DATABASE_URL: database.url } })
  key = await t.issueKey()
})
afterAll(async () => {
  await t?.close()
  await database?.drop()
})

const auth = () => ({ authorization: `Bearer ${key}` })
const create = (body: object, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...auth(), ...headers }, payload: body })

test('three instances starting at once on one database apply each migration once', async () => {
  const fresh = await createTestDatabase()
  try {
    const config = loadConfig({ DATABASE_URL: fresh.url, LOG_LEVEL: 'silent' })
    const instances = await Promise.all([createDeps(config), createDeps(config), createDeps(config)])
    const applied = await instances[0]?.database.db
      .selectFrom('kysely_migration' as never)
      .selectAll()
      .execute()
    expect(applied?.map((row) => (row as { name: string }).name)).toEqual(MIGRATION_NAMES)
    await Promise.all(instances.map((deps) => deps.close()))
  } finally {
    await fresh.drop()
  }
})

test('creates and reads pets with exact int64 values and no status when none was given', async () => {
  const created = await create({ name: '  Rex ', categoryId: 9007199254740991 })
  expect(created.statusCode).toBe(201)
  const pet = created.json()
  expect(pet).toEqual({ id: expect.any(Number), name: 'Rex', categoryId: 9007199254740991 })
  const read = await t.app.inject({ method: 'GET', url: `/v1/pets/${pet.id}`, headers: auth() })
  expect(read.json()).toEqual(pet)
  const withStatus = (await create({ name: 'Tom', categoryId: 1, status: 'sold' })).json()
  const sold = await t.app.inject({ method: 'GET', url: '/v1/pets?status=sold', headers: auth() })
  expect(sold.json()).toContainEqual(withStatus)
})

test('a walk over all pages sees every existing pet exactly once while others are created', async () => {
  for (let i = 0; i < 25; i++) await create({ name: `Walk ${i}`, categoryId: 2 })
  const before = (await t.deps.pets.listPets({ limit: 100 })).items.map((pet) => pet.id)
  const seen: number[] = []
  let url: string | undefined = '/v1/pets?limit=6'
  while (url) {
    const pending: Promise<LightMyRequestResponse> = t.app.inject({ method: 'GET', url, headers: auth() })
    await Promise.all([
      pending,
      create({ name: 'During', categoryId: 3 }),
      create({ name: 'During', categoryId: 3 }),
    ])
    const page: LightMyRequestResponse = await pending
    seen.push(...page.json().map((pet: { id: number }) => pet.id))
    const next: string | undefined = /<([^>]+)>/.exec(String(page.headers.link ?? ''))?.[1]
    url = next && new URL(next).pathname + new URL(next).search
  }
  expect(new Set(seen).size).toBe(seen.length)
  expect([...seen].sort((a, b) => a - b)).toEqual(seen)
  for (const id of before) expect(seen).toContain(id)
})

test('concurrent duplicates with one Idempotency-Key create exactly one pet; another body is 422', async () => {
  const before = await countPets(t)
  const responses = await Promise.all(
    Array.from({ length: 20 }, () =>
      create({ name: 'Burst', categoryId: 4 }, { 'idempotency-key': 'pg-burst' }),
    ),
  )
  expect(await countPets(t)).toBe(before + 1)
  const ids = new Set(responses.filter((r) => r.statusCode === 201).map((r) => r.json().id))
  expect(ids.size).toBe(1)
  expect(responses.every((r) => r.statusCode === 201 || r.statusCode === 409)).toBe(true)
  const reused = await create({ name: 'Other', categoryId: 4 }, { 'idempotency-key': 'pg-burst' })
  expect(reused.statusCode).toBe(422)
})

test('a revoked key is refused on the next request', async () => {
  const doomed = await t.issueKey('free')
  const headers = { authorization: `Bearer ${doomed}` }
  expect((await t.app.inject({ method: 'GET', url: '/v1/pets', headers })).statusCode).toBe(200)
  const [issued] = (await t.deps.apiKeys.listApiKeys()).slice(-1)
  await t.deps.apiKeys.revokeApiKey(issued?.id ?? 0)
  expect((await t.app.inject({ method: 'GET', url: '/v1/pets', headers })).statusCode).toBe(401)
})
