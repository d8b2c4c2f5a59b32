import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, test } from 'vitest'
import YAML from 'yaml'
import { buildTestApp, logCapture, serveTestApp, type TestApp } from './helpers.js'
import { sendRaw } from './raw-http.js'

/** The unauthenticated documents, and where the base address in them and in Link headers comes from. */

let t: TestApp | undefined
afterEach(async () => {
  await t?.close()
  t = undefined
})

const serversOf = async (app: TestApp, headers: Record<string, string>) =>
  (await app.app.inject({ method: 'GET', url: '/v1/openapi.json', headers })).json().servers[0].url

describe('the base address taken from a request', () => {
  test('a Host that is not a valid host[:port] is not used', async () => {
    t = await buildTestApp()
    expect(await serversOf(t, { host: 'shop.example:8443' })).toBe('http://shop.example:8443/v1')
    for (const host of ['evil.example:99999', 'a b', 'x.example/path', '-x.example', 'ex ample:80']) {
      expect(await serversOf(t, { host })).toBe('http://127.0.0.1:8080/v1')
    }
  })

  test('X-Forwarded-* count only with TRUST_PROXY, and X-Forwarded-Proto only as http or https', async () => {
    t = await buildTestApp()
    const forwarded = { host: 'inner:8080', 'x-forwarded-host': 'shop.example', 'x-forwarded-proto': 'https' }
    expect(await serversOf(t, forwarded)).toBe('http://inner:8080/v1')
    await t.close()
    t = await buildTestApp({ env: { TRUST_PROXY: 'true' } })
    expect(await serversOf(t, forwarded)).toBe('https://shop.example/v1')
    const vary = await t.app.inject({ method: 'GET', url: '/v1/openapi.json', headers: forwarded })
    expect(vary.headers.vary).toBe('Host, X-Forwarded-Host, X-Forwarded-Proto, Accept-Encoding')
    expect(await serversOf(t, { ...forwarded, 'x-forwarded-proto': 'javascript' })).toBe(
      'http://shop.example/v1',
    )
    expect(await serversOf(t, { ...forwarded, 'x-forwarded-host': 'bad host' })).toBe(
      'https://127.0.0.1:8080/v1',
    )
  })

  test('a request with two Host header lines is 400, whatever its path', async () => {
    const served = await serveTestApp()
    t = served
    for (const path of ['/v1/openapi.json', '/v1/pets', '/healthz']) {
      const reply = (
        await sendRaw(
          served.port,
          `GET ${path} HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\nConnection: close\r\n\r\n`,
        )
      ).toString()
      expect(reply).toMatch(/^HTTP\/1\.1 400 /)
      expect(reply).toContain('"code":"invalid_request"')
      expect(reply).toContain('exactly one Host header')
    }
  })
})

describe('the OpenAPI document', () => {
  test('openapi.json is revalidated, not stored stale: no-cache, a strong ETag, Vary, and 304 on a match', async () => {
    t = await buildTestApp()
    const first = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })
    expect(first.headers['cache-control']).toBe('no-cache')
    expect(first.headers.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/)
    expect(first.headers.vary).toBe('Host, Accept-Encoding')
    const again = await t.app.inject({
      method: 'GET',
      url: '/v1/openapi.json',
      headers: { 'if-none-match': String(first.headers.etag) },
    })
    expect(again.statusCode).toBe(304)
    expect(again.body).toBe('')
    const elsewhere = await t.app.inject({
      method: 'GET',
      url: '/v1/openapi.json',
      headers: { host: 'shop.example' },
    })
    expect(elsewhere.headers.etag).not.toBe(first.headers.etag)
  })

  test('is rendered once per process, however often, for however many Hosts, in whichever format', async () => {
    const { destination: logDestination, lines } = logCapture()
    t = await buildTestApp({ logDestination, env: { LOG_LEVEL: 'debug' } })
    const bodies = new Set<string>()
    for (let i = 0; i < 20; i++) {
      for (const url of ['/v1/openapi.json', '/v1/docs/json', '/v1/docs/yaml']) {
        const response = await t.app.inject({ method: 'GET', url })
        expect(response.statusCode).toBe(200)
        bodies.add(response.body)
      }
    }
    expect(bodies.size).toBe(2)
    for (let i = 0; i < 20; i++) {
      const host = `shop${i}.example`
      const yaml = await t.app.inject({ method: 'GET', url: '/v1/docs/yaml', headers: { host } })
      expect(yaml.body).toContain(`- url: http://${host}/v1\n`)
      const json = await t.app.inject({ method: 'GET', url: '/v1/openapi.json', headers: { host } })
      expect(json.json().servers[0].url).toBe(`http://${host}/v1`)
    }
    const renderings = lines.filter((line) => line.includes('OpenAPI document rendered'))
    expect(renderings.map((line) => JSON.parse(line).format)).toEqual(['json', 'yaml'])
    const yaml = await t.app.inject({ method: 'GET', url: '/v1/docs/yaml' })
    expect(yaml.headers['content-type']).toBe('application/x-yaml')
    expect(yaml.body).toContain('openapi: 3.1.0')
  })

  test('two Hosts get documents that differ only in the base address, each with a stable ETag of its own', async () => {
    t = await buildTestApp()
    const { app } = t
    const get = (host: string, url = '/v1/openapi.json') =>
      app.inject({ method: 'GET', url, headers: { host } })
    const [a, b, again] = await Promise.all([get('a.example'), get('[::1]:8443'), get('a.example')])
    expect(a.headers.etag).toBe(again.headers.etag)
    expect(a.headers.etag).not.toBe(b.headers.etag)
    expect(b.json().servers[0].url).toBe('http://[::1]:8443/v1')
    expect(a.body.replaceAll('http://a.example/v1', 'http://[::1]:8443/v1')).toBe(b.body)
    const yaml = (await get('[::1]:8443', '/v1/docs/yaml')).body
    expect(YAML.parse(yaml)).toEqual(b.json())
  })
})

describe('the index at / and /v1', () => {
  test('tells a visitor without a key where the docs, the dashboard, the document, the API and the probes are', async () => {
    t = await buildTestApp()
    const version = JSON.parse(readFileSync('package.json', 'utf8')).version
    for (const url of ['/', '/v1', '/v1/']) {
      const index = await t.app.inject({ method: 'GET', url, headers: { host: 'shop.example:8443' } })
      expect(index.statusCode).toBe(200)
      expect(index.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(index.headers.vary).toBe('Host')
      expect(index.json()).toEqual({
        name: 'Petstore API',
        version,
        links: {
          docs: 'http://shop.example:8443/v1/docs',
          dashboard: 'http://shop.example:8443/dashboard',
          openapi: 'http://shop.example:8443/v1/openapi.json',
          api: 'http://shop.example:8443/v1/pets',
          health: 'http://shop.example:8443/healthz',
          readiness: 'http://shop.example:8443/readyz',
        },
      })
      expect((await t.app.inject({ method: 'HEAD', url })).statusCode).toBe(200)
    }
    // Every link answers: the public ones without a key, the API with a 401 that asks for one.
    const { links } = (await t.app.inject({ method: 'GET', url: '/v1' })).json()
    for (const [name, link] of Object.entries<string>(links)) {
      const status = (await t.app.inject({ method: 'GET', url: new URL(link).pathname })).statusCode
      expect([name, status]).toEqual([name, name === 'api' ? 401 : 200])
    }
  })
})

describe('the documentation is limited per client IP', () => {
  test('past PETSTORE_PUBLIC_PER_MINUTE a client gets 429 with the Error body and Retry-After; others and the probes do not', async () => {
    t = await buildTestApp({ env: { PETSTORE_PUBLIC_PER_MINUTE: '5' } })
    t.clock.set(Date.UTC(2027, 2, 10, 10, 0, 45))
    const from = (remoteAddress: string, url: string) => t?.app.inject({ method: 'GET', url, remoteAddress })
    const urls = ['/v1/openapi.json', '/v1/docs/json', '/v1/docs/yaml', '/v1/docs/static/index.html', '/v1']
    for (const url of urls) expect((await from('198.51.100.1', url))?.statusCode).toBeLessThan(400)
    const refused = await from('198.51.100.1', '/')
    expect(refused?.statusCode).toBe(429)
    expect(refused?.json()).toMatchObject({ code: 'rate_limited', status: 429 })
    expect(refused?.headers['retry-after']).toBe('15')
    expect((await from('198.51.100.2', '/v1/openapi.json'))?.statusCode).toBe(200)
    expect((await from('198.51.100.1', '/healthz'))?.statusCode).toBe(200)
    t.clock.advance(15_000)
    expect((await from('198.51.100.1', '/v1/openapi.json'))?.statusCode).toBe(200)
  })
})

describe('the docs page’s files answer their own 4xx', () => {
  test('a range past the end is 416 with Content-Range, a failed If-Match 412, never a 500 or an error log', async () => {
    const { destination: logDestination, lines } = logCapture()
    t = await buildTestApp({ logDestination })
    const file = '/v1/docs/static/index.css'
    const whole = await t.app.inject({ method: 'GET', url: file })
    expect(whole.statusCode).toBe(200)
    const range = await t.app.inject({ method: 'GET', url: file, headers: { range: 'bytes=99999999-' } })
    expect(range.statusCode).toBe(416)
    expect(range.json()).toMatchObject({ code: 'range_not_satisfiable', status: 416 })
    expect(range.headers['content-range']).toBe(`bytes */${whole.rawPayload.length}`)
    const stale = await t.app.inject({ method: 'GET', url: file, headers: { 'if-match': '"stale"' } })
    expect(stale.statusCode).toBe(412)
    expect(stale.json()).toMatchObject({ code: 'precondition_failed', status: 412 })
    expect(lines.filter((line) => JSON.parse(line).level >= 50)).toEqual([])
  })
})
