import { afterAll, beforeAll, expect, test } from 'vitest'
import { buildTestApp, logCapture, type TestApp } from './helpers.js'

let t: TestApp
const logs = logCapture()
beforeAll(async () => {
  t = await buildTestApp({ logDestination: logs.destination })
})
afterAll(() => t.close())

const completed = (reqId: string) =>
  logs.records().filter((line) => line.msg === 'request completed' && line.reqId === reqId)

test('one line per request names method, route, status, duration, request id, account, client IP and User-Agent', async () => {
  const issued = await t.deps.apiKeys.issueApiKey({ plan: 'pro' })
  const response = await t.app.inject({
    method: 'GET',
    url: '/v1/pets?limit=5',
    remoteAddress: '203.0.113.7',
    headers: {
      authorization: `Bearer ${issued.key}`,
      'user-agent': 'shop-sync/2.1',
      'x-request-id': 'trace-42',
    },
  })
  expect(response.statusCode).toBe(200)
  const [line, ...more] = completed('trace-42')
  expect(more).toEqual([])
  expect(line).toMatchObject({
    level: 30,
    method: 'GET',
    url: '/v1/pets?limit=5',
    route: '/v1/pets',
    statusCode: 200,
    account: issued.apiKey.id,
    ip: '203.0.113.7',
    userAgent: 'shop-sync/2.1',
  })
  expect(line?.responseTime).toEqual(expect.any(Number))
  expect(logs.lines.join('\n')).not.toContain(issued.key)
})

test('a request without an accepted key has no account; an unknown route is logged as unmatched', async () => {
  await t.app.inject({ method: 'GET', url: '/v1/pets', headers: { 'x-request-id': 'no-key' } })
  expect(completed('no-key')).toEqual([expect.objectContaining({ statusCode: 401, route: '/v1/pets' })])
  expect(completed('no-key')[0]).not.toHaveProperty('account')
  await t.app.inject({ method: 'GET', url: '/nowhere', headers: { 'x-request-id': 'lost' } })
  expect(completed('lost')).toEqual([expect.objectContaining({ statusCode: 404, route: 'unmatched' })])
})

test('a key sent in the query string never authenticates and never reaches a log line', async () => {
  const issued = await t.deps.apiKeys.issueApiKey({ plan: 'pro' })
  for (const parameter of ['api_key', 'access_token', 'apiKey', 'key', 'token', 'API_KEY', 'Access-Token']) {
    const reqId = `query-${parameter}`
    const response = await t.app.inject({
      method: 'GET',
      url: `/v1/pets?limit=5&${parameter}=${issued.key}&status=sold`,
      headers: { 'x-request-id': reqId },
    })
    expect(response.statusCode).toBe(401)
    expect(completed(reqId)[0]?.url).toBe(`/v1/pets?limit=5&${parameter}=[redacted]&status=sold`)
  }
  expect(logs.lines.join('\n')).not.toContain(issued.key)
})

test('a key anywhere else, in any spelling, is redacted from every log line and never echoed', async () => {
  const caller = await t.deps.apiKeys.issueApiKey({ plan: 'pro' })
  const leaked = await t.deps.apiKeys.issueApiKey({ plan: 'pro' })
  const secret = leaked.key.slice('ps_live_'.length)
  const encoded = `ps%5Flive%5F${secret}`
  const placements: { url: string; headers?: Record<string, string> }[] = [
    { url: `/v1/pets?api%5Fkey=${leaked.key}` },
    { url: `/v1/pets?limit=1;api_key=${leaked.key}` },
    { url: `/v1/pets?a=${leaked.key}` },
    { url: `/v1/pets?a=${encoded}` },
    { url: `/v1/pets?access_token%3D${leaked.key}` },
    { url: `/v1/pets/${leaked.key}` },
    { url: `/v1/${leaked.key}` },
    { url: `/v1/${encoded}` },
    { url: '/v1/pets', headers: { 'user-agent': `sync ${leaked.key}` } },
    { url: '/v1/pets', headers: { 'x-request-id': leaked.key } },
  ]
  for (const authorization of [`Bearer ${caller.key}`, undefined]) {
    for (const { url, headers } of placements) {
      const response = await t.app.inject({
        method: 'GET',
        url,
        headers: { ...headers, ...(authorization && { authorization }) },
      })
      expect(response.statusCode, url).toBeLessThan(500)
      expect(JSON.stringify(response.headers), url).not.toContain(secret)
      expect(response.body, url).not.toContain(secret)
    }
  }
  const written = logs.lines.join('\n')
  expect(written).not.toContain(secret)
  expect(written).toContain('/v1/pets/[redacted]')
  expect(written).toContain('"userAgent":"sync [redacted]"')
})

test('a webhook secret sent in the path or the User-Agent, in any spelling, never reaches a log line', async () => {
  const caller = await t.deps.apiKeys.issueApiKey({ plan: 'pro' })
  // As webhooks/signature.ts makes one: base64, with its `+`, `/` and `=`.
  const secret = 'whsec_Q2xpZW50+U2VjcmV0/c2lnbmluZ3M='
  for (const { url, headers } of [
    { url: `/v1/nothing/${secret}` },
    { url: `/v1/nothing/${encodeURIComponent(secret)}` },
    { url: '/v1/pets', headers: { 'user-agent': `sync ${secret}` } },
  ]) {
    const response = await t.app.inject({
      method: 'GET',
      url,
      headers: { ...headers, authorization: `Bearer ${caller.key}` },
    })
    expect(response.statusCode, url).toBeLessThan(500)
  }
  const written = logs.lines.join('\n')
  for (const part of ['Q2xpZW50', 'U2VjcmV0', 'c2lnbmluZ3M']) expect(written).not.toContain(part)
  expect(written).toContain('"url":"/v1/nothing/[redacted]"')
})

test('anything else that logs a key-shaped text has it redacted too', () => {
  t.deps.logger.warn({ detail: `seen ps_test_${'x'.repeat(32)}` }, 'a warning')
  expect(logs.lines.at(-1)).toContain('"detail":"seen [redacted]"')
})
