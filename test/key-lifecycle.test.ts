import { beforeEach, describe, expect, test } from 'vitest'
import { usageOf } from '../src/api-keys/usage.js'
import { build, type TestApp } from './helpers.js'

/**
 * Key lifecycle (CONTRACT §10) through the HTTP API: scopes, expiry, updates, rotation, the standing
 * endpoint and usage. On SQLite in `npm test`, on PostgreSQL + Redis in `test:services`.
 */
let t: TestApp
// A fresh app per test: the tests change pets, orders, keys and windows the next one would see.
beforeEach(async (context) => {
  t = await build(context, { env: { PETSTORE_BAN_AFTER: '2', PETSTORE_BAN_SECONDS: '600' } })
})

const HOUR = 3_600_000
const list = (key: string) => t.app.inject({ method: 'GET', url: '/v1/pets', headers: t.auth(key) })
const create = (key: string) =>
  t.app.inject({
    method: 'POST',
    url: '/v1/pets',
    headers: { ...t.auth(key), 'content-type': 'application/json' },
    payload: { name: 'Rex', categoryId: 1 },
  })
const standing = (key: string) => t.app.inject({ method: 'GET', url: '/v1/rate_limit', headers: t.auth(key) })
const remaining = (response: { headers: Record<string, unknown> }) =>
  Number(response.headers['x-ratelimit-remaining'])
const issue = async (input: Parameters<TestApp['deps']['apiKeys']['issueApiKey']>[0]) =>
  t.deps.apiKeys.issueApiKey(input)

describe('scopes', () => {
  test('a read key may list, and gets 403 insufficient_scope for a write, counted against its limits', async () => {
    const { key } = await issue({ plan: 'free', scope: 'read' })
    const before = await list(key)
    expect(before.statusCode).toBe(200)
    const refused = await create(key)
    expect(refused.statusCode).toBe(403)
    expect(refused.json()).toMatchObject({ code: 'insufficient_scope', status: 403 })
    expect(refused.json().message).toContain('read scope')
    expect(refused.headers['www-authenticate']).toBe('Bearer error="insufficient_scope"')
    expect(remaining(refused)).toBe(remaining(before) - 1)
    expect((await list(key)).json()).toEqual(before.json())
  })

  test.each([
    ['POST', '/v1/nope', 404],
    ['PUT', '/v1/webhook_endpoints/we_17', 405],
    ['OPTIONS', '/v1/events', 405],
    ['POST', '/v1/webhook_endpoints/we_1%ZZ', 400],
    ['PATCH', '/v1/webhook_endpoints/we_1%ZZ', 400],
    ['DELETE', '/v1/pets/1', 403],
  ] as const)(
    'a read key gets what the route answers first: %s %s is %d, counted',
    async (method, url, status) => {
      const reader = (await issue({ plan: 'free', scope: 'read' })).key
      const writer = (await issue({ plan: 'free' })).key
      const send = (key: string) => t.app.inject({ method, url, headers: t.auth(key) })
      const [read, written] = [await send(reader), await send(writer)]
      expect(read.statusCode).toBe(status)
      expect(read.headers.allow).toBe(written.headers.allow)
      expect(remaining(read)).toBe(59)
      if (status !== 403)
        expect(read.json()).toEqual({ ...written.json(), requestId: read.headers['x-request-id'] })
    },
  )

  test('with CORS, an OPTIONS that is no preflight is a 405 for a read key too', async (context) => {
    const cors = await build(context, { env: { CORS_ORIGINS: 'https://shop.example' } })
    const { key } = await cors.deps.apiKeys.issueApiKey({ plan: 'free', scope: 'read' })
    const response = await cors.app.inject({ method: 'OPTIONS', url: '/v1/events', headers: cors.auth(key) })
    expect(response.statusCode).toBe(405)
    expect(response.headers.allow).toBe('GET, HEAD')
  })
})

describe('expiry', () => {
  test('a key works until its expiry instant, then gets 401 naming that instant', async () => {
    const expiresAt = t.clock.now() + HOUR
    const { key } = await issue({ plan: 'free', expiresAt })
    expect((await list(key)).statusCode).toBe(200)
    t.clock.advance(HOUR)
    const expired = await list(key)
    expect(expired.statusCode).toBe(401)
    expect(expired.json().message).toBe(`the API key expired at ${new Date(expiresAt).toISOString()}`)
    expect(expired.headers['www-authenticate']).toBe('Bearer error="invalid_token"')
  })
})

describe('updates', () => {
  test('a plan, scope or expiry change applies on the next request, and counted requests stay counted', async () => {
    const { key, apiKey } = await issue({ plan: 'free' })
    for (let i = 0; i < 5; i++) await list(key)
    expect(remaining(await list(key))).toBe(54)
    await t.deps.apiKeys.updateApiKey(apiKey.id, { plan: 'pro' })
    const upgraded = await list(key)
    expect(upgraded.headers['x-ratelimit-limit']).toBe('300')
    expect(remaining(upgraded)).toBe(300 - 7)
    await t.deps.apiKeys.updateApiKey(apiKey.id, { scope: 'read' })
    expect((await create(key)).statusCode).toBe(403)
    await t.deps.apiKeys.updateApiKey(apiKey.id, { scope: 'write', expiresAt: t.clock.now() + 1 })
    t.clock.advance(1)
    expect((await list(key)).statusCode).toBe(401)
    await t.deps.apiKeys.updateApiKey(apiKey.id, { expiresAt: null })
    expect((await create(key)).statusCode).toBe(201)
  })

  test('limits that make no sense for the plan are refused and change nothing', async () => {
    const { apiKey } = await issue({ plan: 'free' })
    const update = (input: Parameters<TestApp['deps']['apiKeys']['updateApiKey']>[1]) =>
      t.deps.apiKeys.updateApiKey(apiKey.id, input)
    await expect(update({ perMinute: 5 })).rejects.toThrow(
      'custom limits are only for enterprise keys, not free',
    )
    await expect(update({ plan: 'enterprise', perDay: 9 })).rejects.toThrow(
      'needs both --per-minute and --per-day',
    )
    await expect(t.deps.apiKeys.updateApiKey(apiKey.id + 10_000, { plan: 'pro' })).rejects.toThrow(
      'no key with id',
    )
    expect(await t.deps.apiKeys.findApiKey(apiKey.id)).toEqual(apiKey)
    const enterprise = await update({ plan: 'enterprise', perMinute: 3, perDay: 9 })
    expect(enterprise.limits).toEqual({ perMinute: 3, perDay: 9 })
    expect((await update({ perDay: 20 })).limits).toEqual({ perMinute: 3, perDay: 20 })
    expect((await update({ plan: 'pro' })).limits).toEqual({ perMinute: 300, perDay: 10_000 })
  })
})

describe('rotation', () => {
  test('the new secret works at once; the old one until the grace ends, then 401 "rotated"; one set of windows', async () => {
    const { key: old, apiKey } = await issue({ plan: 'free' })
    expect(remaining(await list(old))).toBe(59)
    const { key: fresh, apiKey: rotated } = await t.deps.apiKeys.rotateApiKey(apiKey.id, 24 * HOUR)
    expect(rotated.id).toBe(apiKey.id)
    expect(fresh).not.toBe(old)
    expect(remaining(await list(fresh))).toBe(58)
    expect(remaining(await list(old))).toBe(57)
    expect((await t.deps.apiKeys.listApiKeys()).find((key) => key.id === apiKey.id)?.rotationPending).toBe(
      true,
    )
    // Both secrets are told when the replaced one stops.
    const graceEnd = new Date(t.clock.now() + 24 * HOUR).toISOString()
    expect((await standing(fresh)).json().rotationPendingUntil).toBe(graceEnd)
    expect((await standing(old)).json().rotationPendingUntil).toBe(graceEnd)
    t.clock.advance(24 * HOUR)
    const refused = await list(old)
    expect(refused.statusCode).toBe(401)
    expect(refused.json().message).toMatch(
      /^this key was rotated on .* and its grace period ended at .*; use the new key$/,
    )
    expect((await list(fresh)).statusCode).toBe(200)
    expect((await t.deps.apiKeys.listApiKeys()).find((key) => key.id === apiKey.id)?.rotationPending).toBe(
      false,
    )
    expect((await standing(fresh)).json().rotationPendingUntil).toBeNull()
  })

  test('with no grace the old secret stops at once; a revoked key cannot be rotated', async () => {
    const { key: old, apiKey } = await issue({ plan: 'free' })
    await t.deps.apiKeys.rotateApiKey(apiKey.id, 0)
    expect((await list(old)).statusCode).toBe(401)
    await t.deps.apiKeys.revokeApiKey(apiKey.id)
    await expect(t.deps.apiKeys.rotateApiKey(apiKey.id, 0)).rejects.toThrow(`key ${apiKey.id} is revoked`)
  })
})

describe('GET /v1/rate_limit', () => {
  test('tells the plan, scope, expiry and both windows, without counting itself', async () => {
    const expiresAt = t.clock.now() + 90 * 24 * HOUR
    const { key } = await issue({ plan: 'pro', scope: 'read', expiresAt })
    await list(key)
    const first = await standing(key)
    const second = await standing(key)
    expect(first.statusCode).toBe(200)
    expect(second.json()).toEqual(first.json())
    expect(first.json()).toEqual({
      plan: 'pro',
      scope: 'read',
      expiresAt: new Date(expiresAt).toISOString(),
      limits: {
        minute: { limit: 300, remaining: 299, reset: expect.any(Number) },
        day: { limit: 10_000, remaining: 9_999, reset: expect.any(Number) },
      },
      bannedUntil: null,
      rotationPendingUntil: null,
    })
    expect(first.headers['x-ratelimit-remaining']).toBe('299')
    expect(first.headers['x-ratelimit-reset']).toBe(String(first.json().limits.minute.reset))
    expect(first.headers['cache-control']).toBe('no-store')
    expect(remaining(await list(key))).toBe(298)
  })

  test('answers while the key is banned, and shows the ban', async () => {
    const { key } = await issue({ plan: 'enterprise', perMinute: 1, perDay: 100 })
    const statuses = []
    for (let i = 0; i < 5; i++) statuses.push((await list(key)).json().code ?? 200)
    expect(statuses.at(-1)).toBe('key_banned')
    const banned = await standing(key)
    expect(banned.statusCode).toBe(200)
    expect(banned.json().bannedUntil).toBeGreaterThan(t.clock.now() / 1000)
    expect(banned.json().limits.minute).toMatchObject({ limit: 1, remaining: 0 })
  })

  test('while banned, its headers and its body describe the same numbers: nothing left until the ban ends', async () => {
    const { key } = await issue({ plan: 'enterprise', perMinute: 1, perDay: 100 })
    for (let i = 0; i < 5; i++) await list(key)
    const banned = await standing(key)
    const { limits, bannedUntil } = banned.json()
    // Each window admits again when the ban ends (the minute's own end comes sooner).
    expect(limits.minute).toMatchObject({ remaining: 0, reset: bannedUntil })
    expect(limits.day).toMatchObject({ remaining: 0, reset: bannedUntil })
    expect(banned.headers['x-ratelimit-remaining']).toBe('0')
    expect(banned.headers['x-ratelimit-reset']).toBe(String(bannedUntil))
    expect(banned.headers['x-ratelimit-limit']).toBe(String(limits.minute.limit))
  })

  test('without a valid key it is a 401 like any API request', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/v1/rate_limit' })
    expect(response.statusCode).toBe(401)
    expect(response.headers['x-ratelimit-limit']).toBe('60')
    const { key } = await issue({ plan: 'free' })
    const wrongMethod = await t.app.inject({ method: 'DELETE', url: '/v1/rate_limit', headers: t.auth(key) })
    expect(wrongMethod.statusCode).toBe(405)
    expect(wrongMethod.headers.allow).toBe('GET, HEAD')
  })
})

describe('usage', () => {
  test('requests are counted per UTC day and status class, flushed without a write per request', async () => {
    const { key, apiKey } = await issue({ plan: 'enterprise', perMinute: 4, perDay: 100, scope: 'read' })
    for (let i = 0; i < 3; i++) await list(key)
    await create(key)
    await list(key)
    const before = await usageOf(t.deps.database, apiKey.id, 1, t.clock.now())
    expect(before[0]?.requests).toEqual({ '2xx': 0, '4xx': 0, '429': 0, '5xx': 0 })
    await t.deps.usage.flush()
    const after = await usageOf(t.deps.database, apiKey.id, 2, t.clock.now())
    expect(after.map((day) => day.day)).toEqual([
      new Date(t.clock.now() - 86_400_000).toISOString().slice(0, 10),
      new Date(t.clock.now()).toISOString().slice(0, 10),
    ])
    expect(after[1]?.requests).toEqual({ '2xx': 3, '4xx': 1, '429': 1, '5xx': 0 })
    await list(key)
    await t.deps.usage.flush()
    const listed = (await t.deps.apiKeys.listApiKeys()).find((entry) => entry.id === apiKey.id)
    expect(listed?.lastUsedAt).toBe(t.clock.now())
    expect((await usageOf(t.deps.database, apiKey.id, 1, t.clock.now()))[0]?.requests['429']).toBe(2)
  })
})
