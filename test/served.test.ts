import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { EXPOSED_HEADERS } from '../src/http/cors.js'
import { buildTestApp, onServices, type TestApp } from './helpers.js'

let t: TestApp
let key: string
beforeAll(async () => {
  t = await buildTestApp({ env: { CORS_ORIGINS: 'https://shop.example, https://admin.shop.example' } })
  key = await t.issueKey()
})
afterAll(() => t.close())

describe('probes and metrics', () => {
  test('/healthz and /readyz answer 200 while the database answers', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' })
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({
      status: 'ready',
      // Redis shares the limits of every instance; the SQLite suite runs without it.
      rateLimits: onServices ? 'shared' : 'per-instance',
    })
  })

  test('/readyz is 503 unavailable when the database does not answer, /healthz stays 200', async () => {
    const broken = await buildTestApp()
    try {
      expect((await broken.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200)
      await broken.deps.database.close()
      const ready = await broken.app.inject({ method: 'GET', url: '/readyz' })
      expect(ready.statusCode).toBe(503)
      expect(ready.json()).toMatchObject({ code: 'unavailable', status: 503 })
      expect(ready.headers['retry-after']).toBe('1')
      expect((await broken.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200)
    } finally {
      await broken.app.close()
    }
  })

  test('/metrics counts requests by route pattern and status', async () => {
    await t.app.inject({ method: 'GET', url: '/v1/pets/12345', headers: { authorization: `Bearer ${key}` } })
    await t.app.inject({ method: 'GET', url: '/v1/pets' })
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' })
    expect(metrics.headers['content-type']).toContain('text/plain')
    expect(metrics.body).toContain(
      'petstore_http_requests_total{route="/v1/pets/:petId",method="GET",status="404"} 1',
    )
    expect(metrics.body).toContain(
      'petstore_http_requests_total{route="/v1/pets",method="GET",status="401"} 1',
    )
    expect(metrics.body).toContain('petstore_http_request_duration_seconds_bucket')
    expect(metrics.body).not.toContain(key)
  })
})

describe('request ids and cache headers', () => {
  test('a sane X-Request-Id is echoed and appears in error bodies', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/v1/pets',
      headers: { 'x-request-id': 'abc-123.x' },
    })
    expect(response.headers['x-request-id']).toBe('abc-123.x')
    expect(response.json().requestId).toBe('abc-123.x')
  })

  test.each(['has spaces', 'x'.repeat(129), 'semi;colon'])(
    'an insane X-Request-Id (%s) is replaced',
    async (sent) => {
      const response = await t.app.inject({
        method: 'GET',
        url: '/healthz',
        headers: { 'x-request-id': sent },
      })
      expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    },
  )

  test('API responses carry Cache-Control: no-store and nosniff; 404s carry a request id', async () => {
    const ok = await t.app.inject({
      method: 'GET',
      url: '/v1/pets',
      headers: { authorization: `Bearer ${key}` },
    })
    expect(ok.headers['cache-control']).toBe('no-store')
    expect(ok.headers['x-content-type-options']).toBe('nosniff')
    const missing = await t.app.inject({ method: 'GET', url: '/nowhere' })
    expect(missing.headers['x-request-id']).toBeDefined()
  })
})

describe('CORS per CORS_ORIGINS', () => {
  test('a preflight from an allowed origin may send the API headers', async () => {
    const response = await t.app.inject({
      method: 'OPTIONS',
      url: '/v1/pets',
      headers: {
        origin: 'https://shop.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, idempotency-key',
      },
    })
    expect(response.statusCode).toBe(204)
    expect(response.headers['access-control-allow-origin']).toBe('https://shop.example')
    expect(String(response.headers['access-control-allow-headers']).toLowerCase()).toContain(
      'idempotency-key',
    )
  })

  test('responses to an allowed origin expose every header browser code needs', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/v1/pets',
      headers: { origin: 'https://admin.shop.example', authorization: `Bearer ${key}` },
    })
    expect(response.headers['access-control-allow-origin']).toBe('https://admin.shop.example')
    const exposed = String(response.headers['access-control-expose-headers'])
      .split(',')
      .map((name) => name.trim())
    expect(exposed).toEqual(EXPOSED_HEADERS)
    for (const name of [
      'X-RateLimit-Remaining',
      'Retry-After',
      'Link',
      'Deprecation',
      'Sunset',
      'X-Request-Id',
    ]) {
      expect(exposed).toContain(name)
    }
  })

  test('an OPTIONS that is not a preflight gets the 405 with Allow of the API', async () => {
    const response = await t.app.inject({
      method: 'OPTIONS',
      url: '/v1/pets',
      headers: { authorization: `Bearer ${key}` },
    })
    expect(response.statusCode).toBe(405)
    expect(response.headers.allow).toBe('GET, HEAD, POST')
    expect(response.json().code).toBe('method_not_allowed')
    expect(response.headers['x-ratelimit-limit']).toBeDefined()
  })

  test('the public surface varies on Origin as well as on what it varies on itself', async () => {
    const headers = { origin: 'https://shop.example' }
    const index = await t.app.inject({ method: 'GET', url: '/v1', headers })
    expect(index.headers['access-control-allow-origin']).toBe('https://shop.example')
    expect(index.headers.vary).toBe('Origin, Host')
    const document = await t.app.inject({ method: 'GET', url: '/v1/openapi.json', headers })
    expect(document.headers.vary).toBe('Origin, Host, Accept-Encoding')
  })

  test('another origin gets no CORS headers, and without CORS_ORIGINS nobody does', async () => {
    const other = await t.app.inject({
      method: 'GET',
      url: '/v1/pets',
      headers: { origin: 'https://evil.example' },
    })
    expect(other.headers['access-control-allow-origin']).toBeUndefined()
    const plain = await buildTestApp()
    try {
      const response = await plain.app.inject({
        method: 'GET',
        url: '/v1/pets',
        headers: { origin: 'https://shop.example' },
      })
      expect(response.headers['access-control-allow-origin']).toBeUndefined()
    } finally {
      await plain.close()
    }
  })
})

describe('/v1/docs', () => {
  test('serves an HTML reference page whose assets all come from this server', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/v1/docs/' })
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toContain('text/html')
    const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] ?? '')
    expect(assets.length).toBeGreaterThan(0)
    for (const asset of assets) expect(asset).not.toMatch(/^(https?:)?\/\//)
    const initializer = await t.app.inject({ method: 'GET', url: '/v1/docs/static/swagger-initializer.js' })
    expect(initializer.statusCode).toBe(200)
    expect(initializer.body).toContain('validatorUrl: null')
    // Comments aside (one cites a web page), the page's script names no other host.
    expect(initializer.body.replace(/\/\/ .*$/gm, '')).not.toMatch(/https?:\/\//)
  })
})
