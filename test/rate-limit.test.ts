import type { InjectOptions } from 'fastify'
import { afterEach, describe, expect, test } from 'vitest'
import { GET_PET_SUNSET_AT } from '../src/pets/pets.deprecation.js'
import { buildTestApp, operatorConnection, type TestApp } from './helpers.js'

/** 2027-03-10 10:00:30 UTC: 30 s into a minute, 10.5 h into the day. */
const NOW = Date.UTC(2027, 2, 10, 10, 0, 30)
const MINUTE_END_S = Date.UTC(2027, 2, 10, 10, 1) / 1000
const DAY_END_S = Date.UTC(2027, 2, 11) / 1000

let t: TestApp
afterEach(() => t?.close())

async function start(env: Record<string, string> = {}) {
  t = await buildTestApp({ env })
  t.clock.set(NOW)
  return t
}

const list = (key: string | undefined, extra: Partial<InjectOptions> = {}) =>
  t.app.inject({
    method: 'GET',
    url: '/v1/pets',
    headers: key ? { authorization: `Bearer ${key}` } : {},
    ...extra,
  })

async function sendMany(count: number, send: () => ReturnType<typeof list>) {
  const statuses: number[] = []
  for (let i = 0; i < count; i++) statuses.push((await send()).statusCode)
  return statuses
}

describe('plan limits over HTTP', () => {
  test('a Free key gets exactly 60 in the minute, then 429 rate_limited naming the window', async () => {
    const key = await (await start()).issueKey('free')
    const first = await list(key)
    expect(first.headers).toMatchObject({
      'x-ratelimit-limit': '60',
      'x-ratelimit-remaining': '59',
      'x-ratelimit-reset': String(MINUTE_END_S),
      'ratelimit-policy': '"minute";q=60;w=60, "day";q=1000;w=86400',
      ratelimit: '"minute";r=59;t=30',
    })
    expect(await sendMany(59, () => list(key))).toEqual(Array(59).fill(200))
    const refused = await list(key)
    expect(refused.statusCode).toBe(429)
    expect(refused.json()).toMatchObject({ code: 'rate_limited', status: 429 })
    expect(refused.json().message).toContain('per-minute limit of 60 requests reached')
    expect(refused.headers['retry-after']).toBe('30')
    expect(refused.headers['x-ratelimit-remaining']).toBe('0')
    t.clock.set(MINUTE_END_S * 1000)
    const next = await list(key)
    expect(next.statusCode).toBe(200)
    expect(next.headers['x-ratelimit-remaining']).toBe('59')
  })

  test('an enterprise key of 1000/min and 5/day is refused by the day window', async () => {
    const key = await (await start()).issueKey('enterprise', { perMinute: 1000, perDay: 5 })
    expect(await sendMany(5, () => list(key))).toEqual([200, 200, 200, 200, 200])
    const refused = await list(key)
    expect(refused.statusCode).toBe(429)
    expect(refused.json().message).toContain('per-day limit of 5 requests reached')
    expect(refused.headers['retry-after']).toBe(String(DAY_END_S - NOW / 1000))
    expect(refused.headers).toMatchObject({
      'x-ratelimit-limit': '5',
      'x-ratelimit-reset': String(DAY_END_S),
    })
  })

  test('on a tie of remaining requests the headers describe the window that resets later', async () => {
    const key = await (await start()).issueKey('enterprise', { perMinute: 5, perDay: 5 })
    const response = await list(key)
    expect(response.headers).toMatchObject({
      'x-ratelimit-limit': '5',
      'x-ratelimit-remaining': '4',
      'x-ratelimit-reset': String(DAY_END_S),
    })
  })

  test('refused requests do not count: after 20 refusals the day has used exactly 60', async () => {
    const key = await (await start({ PETSTORE_BAN_AFTER: '100' })).issueKey('free')
    await sendMany(80, () => list(key))
    t.clock.set(MINUTE_END_S * 1000 + 59_000)
    const next = await list(key)
    expect(next.headers.ratelimit).toBe('"minute";r=59;t=1')
    expect(next.headers['ratelimit-policy']).toContain('"day";q=1000')
    t.clock.set(MINUTE_END_S * 1000 + 60_000)
    const day = await t.deps.rateLimitStore.peek('key:1', { perMinute: 60, perDay: 1000 }, t.clock.now())
    expect(day.windows.find((window) => window.name === 'day')?.remaining).toBe(1000 - 61)
  })

  test('after PETSTORE_BAN_AFTER refusals the key is banned, then the ban ends by itself', async () => {
    const key = await (await start({ PETSTORE_BAN_AFTER: '3', PETSTORE_BAN_SECONDS: '120' })).issueKey('free')
    await sendMany(60, () => list(key))
    const refusals = [await list(key), await list(key), await list(key)]
    for (const refusal of refusals) expect(refusal.json().code).toBe('rate_limited')
    const banned = await list(key)
    expect(banned.statusCode).toBe(429)
    expect(banned.json().code).toBe('key_banned')
    expect(banned.headers['retry-after']).toBe('120')
    expect(banned.headers['x-ratelimit-remaining']).toBe('0')
    t.clock.advance(90_000)
    const still = await list(key)
    expect(still.json().code).toBe('key_banned')
    expect(still.headers['retry-after']).toBe('30')
    t.clock.advance(30_000)
    expect((await list(key)).statusCode).toBe(200)
  })

  test('a rate-limited getPet still carries its deprecation headers', async () => {
    const key = await (await start()).issueKey('enterprise', { perMinute: 1, perDay: 10 })
    const getPet = () =>
      t.app.inject({ method: 'GET', url: '/v1/pets/1', headers: { authorization: `Bearer ${key}` } })
    expect((await getPet()).statusCode).toBe(404)
    const refused = await getPet()
    expect(refused.statusCode).toBe(429)
    expect(refused.headers.sunset).toBe('Thu, 05 Dec 2030 00:00:00 GMT')
    expect(refused.headers.deprecation).toBe('@1767225600')
  })

  test('a plan change and a revocation take effect on the next request', async () => {
    const key = await (await start()).issueKey('free')
    await sendMany(60, () => list(key))
    expect((await list(key)).statusCode).toBe(429)
    // As an operator would: from another connection (a database shell), not through the service.
    const operator = await operatorConnection(t)
    await operator.exec("UPDATE api_keys SET plan = 'pro' WHERE id = 1")
    await operator.close()
    const upgraded = await list(key)
    expect(upgraded.statusCode).toBe(200)
    expect(upgraded.headers['x-ratelimit-limit']).toBe('300')
    await t.deps.apiKeys.revokeApiKey(1)
    expect((await list(key)).statusCode).toBe(401)
  })
})

describe('unauthenticated requests are limited per client IP', () => {
  test('401s carry the Free headers and the 61st bad key from one IP is 429', async () => {
    await start()
    const bad = `ps_live_${'Z'.repeat(32)}`
    const first = await list(bad)
    expect(first.statusCode).toBe(401)
    expect(first.headers['x-ratelimit-limit']).toBe('60')
    expect(first.headers['x-ratelimit-remaining']).toBe('59')
    expect(await sendMany(59, () => list(bad))).toEqual(Array(59).fill(401))
    const refused = await list(undefined)
    expect(refused.statusCode).toBe(429)
    expect(refused.json().code).toBe('rate_limited')
    expect((await list(bad, { remoteAddress: '10.0.0.2' })).statusCode).toBe(401)
  })

  test('a client IP that keeps trying after 429s is banned like a key', async () => {
    await start({ PETSTORE_BAN_AFTER: '2', PETSTORE_BAN_SECONDS: '300' })
    await sendMany(60, () => list(undefined))
    expect((await list(undefined)).json().code).toBe('rate_limited')
    expect((await list(undefined)).json().code).toBe('rate_limited')
    const banned = await list(`ps_live_${'Q'.repeat(32)}`)
    expect(banned.statusCode).toBe(429)
    expect(banned.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(banned.json()).toMatchObject({ code: 'key_banned', status: 429 })
    expect(banned.json().message).toContain('this client is banned')
    expect(banned.headers['retry-after']).toBe('300')
    expect(banned.headers['x-ratelimit-reset']).toBe(String(NOW / 1000 + 300))
    const key = await t.issueKey('free')
    expect((await list(key)).statusCode).toBe(200)
  })

  test('X-Forwarded-For is ignored unless TRUST_PROXY says so', async () => {
    await start()
    for (let i = 0; i < 60; i++) await list(undefined, { headers: { 'x-forwarded-for': `203.0.113.${i}` } })
    expect((await list(undefined, { headers: { 'x-forwarded-for': '203.0.113.200' } })).statusCode).toBe(429)
    await t.close()
    await start({ TRUST_PROXY: '127.0.0.1' })
    for (let i = 0; i < 60; i++) await list(undefined, { headers: { 'x-forwarded-for': '203.0.113.7' } })
    expect((await list(undefined, { headers: { 'x-forwarded-for': '203.0.113.7' } })).statusCode).toBe(429)
    expect((await list(undefined, { headers: { 'x-forwarded-for': '203.0.113.8' } })).statusCode).toBe(401)
  })
})

test('every status of the API carries the rate-limit headers', async () => {
  await start()
  const key = await t.issueKey()
  const limited = await t.issueKey('enterprise', { perMinute: 1, perDay: 10 })
  const auth = { authorization: `Bearer ${key}` }
  const json = { ...auth, 'content-type': 'application/json' }
  const requests: [number, InjectOptions][] = [
    [200, { method: 'GET', url: '/v1/pets', headers: auth }],
    [
      201,
      {
        method: 'POST',
        url: '/v1/pets',
        headers: { ...json, 'idempotency-key': 'a' },
        payload: '{"name":"A","categoryId":1}',
      },
    ],
    [400, { method: 'GET', url: '/v1/pets?limit=0', headers: auth }],
    [401, { method: 'GET', url: '/v1/pets' }],
    [404, { method: 'GET', url: '/v1/pets/77', headers: auth }],
    [405, { method: 'DELETE', url: '/v1/pets', headers: auth }],
    [413, { method: 'POST', url: '/v1/pets', headers: json, payload: `{"name":"${'x'.repeat(70_000)}"}` }],
    [
      415,
      { method: 'POST', url: '/v1/pets', headers: { ...auth, 'content-type': 'text/plain' }, payload: 'x' },
    ],
    [
      422,
      {
        method: 'POST',
        url: '/v1/pets',
        headers: { ...json, 'idempotency-key': 'a' },
        payload: '{"name":"B","categoryId":1}',
      },
    ],
    [429, { method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${limited}` } }],
  ]
  await list(limited)
  for (const [status, options] of requests) {
    const response = await t.app.inject(options)
    expect(response.statusCode, `${options.method} ${options.url}`).toBe(status)
    for (const header of [
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'x-ratelimit-reset',
      'ratelimit',
      'ratelimit-policy',
    ]) {
      expect(response.headers[header], `${header} on ${status}`).toBeDefined()
    }
  }
  t.clock.set(GET_PET_SUNSET_AT)
  const gone = await t.app.inject({ method: 'GET', url: '/v1/pets/1', headers: auth })
  expect(gone.statusCode).toBe(410)
  expect(gone.headers['x-ratelimit-remaining']).toBeDefined()
  const metrics = await t.app.inject({ method: 'GET', url: '/metrics' })
  expect(metrics.body).toContain('petstore_rate_limit_refusals_total{reason="limited",subject="key"} 1')
  expect(metrics.headers['x-ratelimit-limit']).toBeUndefined()
})
