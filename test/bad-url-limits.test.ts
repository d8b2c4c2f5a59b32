import { afterEach, expect, test } from 'vitest'
import { buildTestApp, type TestApp } from './helpers.js'

/** A URL under /v1 that does not percent-decode: refused by the router, yet counted and headed like any API request. */

let t: TestApp | undefined
afterEach(async () => {
  await t?.close()
  t = undefined
})

const send = (url: string, headers: Record<string, string> = {}) =>
  (t as TestApp).app.inject({ method: 'GET', url, headers })

test('it is 400 with the rate-limit headers, counted against the key', async () => {
  t = await buildTestApp()
  t.clock.set(Date.UTC(2027, 2, 10, 10, 0, 30))
  const key = await t.issueKey('free')
  const auth = { authorization: `Bearer ${key}` }
  for (const url of ['/v1/pets/%E0', '/v1/pe%zzts', '/v1/%']) {
    const refused = await send(url, auth)
    expect(refused.statusCode).toBe(400)
    expect(refused.json()).toMatchObject({ code: 'invalid_request', status: 400 })
    expect(refused.headers).toMatchObject({ 'x-ratelimit-limit': '60', 'cache-control': 'no-store' })
    expect(refused.headers['x-content-type-options']).toBe('nosniff')
  }
  expect((await send('/v1/pets', auth)).headers['x-ratelimit-remaining']).toBe('56')
})

test('past the limit it is 429 with Retry-After, and without a key it counts against the client IP', async () => {
  t = await buildTestApp({ env: { TRUST_PROXY: 'true' } })
  t.clock.set(Date.UTC(2027, 2, 10, 10, 0, 30))
  const from = (ip: string) => ({ 'x-forwarded-for': ip })
  for (let i = 0; i < 60; i++) expect((await send('/v1/pets/%E0', from('203.0.113.9'))).statusCode).toBe(400)
  const limited = await send('/v1/pets/%E0', from('203.0.113.9'))
  expect(limited.statusCode).toBe(429)
  expect(limited.json()).toMatchObject({ code: 'rate_limited' })
  expect(limited.headers['retry-after']).toBe('30')
  expect((await send('/v1/pets', from('203.0.113.9'))).statusCode).toBe(429)
  expect((await send('/v1/pets/%E0', from('203.0.113.10'))).headers['x-ratelimit-remaining']).toBe('59')
})

test('outside /v1 it stays a plain 400, counted against nobody', async () => {
  t = await buildTestApp()
  const refused = await send('/%E0')
  expect(refused.statusCode).toBe(400)
  expect(refused.headers['x-ratelimit-limit']).toBeUndefined()
})
