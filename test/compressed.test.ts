import type { IncomingHttpHeaders } from 'node:http'
import { request } from 'node:http'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { MIN_COMPRESSED_BYTES } from '../src/http/compressed.js'
import { compressionCount } from '../src/http/compression.js'
import { DOCS_PAGE } from '../src/http/openapi.js'
import { type ServedApp, serveTestApp } from './helpers.js'

/**
 * CONTRACT §15: everything the public surface serves (the docs page's files, the OpenAPI document) goes out
 * with br or gzip when Accept-Encoding allows, with Vary: Accept-Encoding, compressed once per process.
 * Over real HTTP (node:http, which decodes nothing), against the real app.
 */

interface Answer {
  status: number
  headers: IncomingHttpHeaders
  body: Buffer
}

function fetchRaw(
  t: ServedApp,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sent = request({ port: t.port, path, method, headers, agent: false }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
      )
    })
    sent.on('error', reject)
    sent.end()
  })
}

/** Asks until the body comes in `coding`: the first requests start its compression, off the event loop. */
async function untilCoded(t: ServedApp, path: string, coding: 'br' | 'gzip'): Promise<void> {
  const coded = async () =>
    (await fetchRaw(t, path, { 'accept-encoding': coding })).headers['content-encoding']
  await vi.waitFor(async () => expect(await coded()).toBe(coding), { timeout: 60_000, interval: 100 })
}

const decode: Record<string, (body: Buffer) => Buffer> = {
  br: brotliDecompressSync,
  gzip: gunzipSync,
  identity: (body) => body,
}

const varyOf = (answer: Answer) => String(answer.headers.vary ?? '').split(/\s*,\s*/)

/** The page's largest file, its smallest compressed one, and the document in both formats. */
const TARGETS = [
  '/v1/docs/static/swagger-ui-bundle.js',
  '/v1/docs/static/swagger-initializer.js',
  '/v1/openapi.json',
  '/v1/docs/yaml',
]

/** Accept-Encoding as sent, and the coding that must answer it. */
const NEGOTIATIONS: [string | undefined, 'br' | 'gzip' | 'identity'][] = [
  ['br', 'br'],
  ['gzip', 'gzip'],
  ['gzip, deflate, br, zstd', 'br'],
  ['br;q=0.5, gzip', 'gzip'],
  ['gzip;q=1, br;q=1', 'br'],
  ['GZip', 'gzip'],
  ['*', 'br'],
  ['br;q=0, gzip', 'gzip'],
  ['gzip;q=0, br;q=0', 'identity'],
  ['identity', 'identity'],
  ['deflate', 'identity'],
  ['', 'identity'],
  [undefined, 'identity'],
]

let t: ServedApp
beforeAll(async () => {
  t = await serveTestApp({ env: { CORS_ORIGINS: 'https://shop.example' } })
  for (const path of TARGETS) await untilCoded(t, path, 'br')
}, 120_000)
afterAll(() => t?.close())

describe.each(TARGETS)('%s', (path) => {
  test.each(NEGOTIATIONS)(
    'Accept-Encoding %j is answered in %s, the same bytes once decoded',
    async (accept, coding) => {
      const identity = await fetchRaw(t, path)
      expect(identity.status).toBe(200)
      expect(identity.headers['content-encoding']).toBeUndefined()
      const answer = await fetchRaw(t, path, accept === undefined ? {} : { 'accept-encoding': accept })
      expect(answer.status).toBe(200)
      expect(answer.headers['content-encoding']).toBe(coding === 'identity' ? undefined : coding)
      expect(answer.headers['content-length']).toBe(String(answer.body.length))
      expect(answer.headers['content-type']).toBe(identity.headers['content-type'])
      expect(varyOf(answer)).toContain('Accept-Encoding')
      expect(decode[coding]?.(answer.body).equals(identity.body)).toBe(true)
      if (coding !== 'identity') expect(answer.body.length).toBeLessThan(identity.body.length)
    },
  )

  test('each coding has an ETag of its own, and a 304 for it only', async () => {
    const tags = new Map<string, string>()
    for (const coding of ['br', 'gzip', 'identity']) {
      const answer = await fetchRaw(t, path, { 'accept-encoding': coding })
      tags.set(coding, String(answer.headers.etag))
      expect(answer.headers.etag).toMatch(/^"[A-Za-z0-9_-]{27}(-br|-gzip)?"$/)
    }
    expect(new Set(tags.values()).size).toBe(3)
    for (const [coding, etag] of tags) {
      for (const [other, otherTag] of tags) {
        const answer = await fetchRaw(t, path, {
          'accept-encoding': coding,
          'if-none-match': `"x", ${otherTag}`,
        })
        expect([coding, other, answer.status]).toEqual([coding, other, other === coding ? 304 : 200])
        if (answer.status === 304) {
          expect(answer.body.length).toBe(0)
          expect(answer.headers.etag).toBe(etag)
          expect(varyOf(answer)).toContain('Accept-Encoding')
        }
      }
      const weak = await fetchRaw(t, path, { 'accept-encoding': coding, 'if-none-match': `W/${etag}` })
      expect(weak.status).toBe(304)
    }
  })

  test('HEAD has the headers of GET and no body', async () => {
    for (const coding of ['br', 'gzip', 'identity']) {
      const get = await fetchRaw(t, path, { 'accept-encoding': coding })
      const head = await fetchRaw(t, path, { 'accept-encoding': coding }, 'HEAD')
      expect(head.status).toBe(200)
      expect(head.body.length).toBe(0)
      for (const name of [
        'content-length',
        'content-encoding',
        'content-type',
        'etag',
        'vary',
        'cache-control',
      ])
        expect([name, head.headers[name]]).toEqual([name, get.headers[name]])
    }
  })
})

describe('what every answer keeps', () => {
  test('CORS and the common headers; Vary names Origin, the base address headers and Accept-Encoding', async () => {
    const origin = { origin: 'https://shop.example', 'accept-encoding': 'br' }
    const bundle = await fetchRaw(t, '/v1/docs/static/swagger-ui-bundle.js', origin)
    expect(bundle.headers['access-control-allow-origin']).toBe('https://shop.example')
    expect(bundle.headers['x-content-type-options']).toBe('nosniff')
    expect(bundle.headers['x-request-id']).toBeDefined()
    expect(bundle.headers['cache-control']).toBe('public, max-age=0')
    expect(bundle.headers.vary).toBe('Origin, Accept-Encoding')
    const document = await fetchRaw(t, '/v1/openapi.json', origin)
    expect(document.headers['cache-control']).toBe('no-cache')
    expect(document.headers.vary).toBe('Origin, Host, Accept-Encoding')
  })

  test('a body under MIN_COMPRESSED_BYTES is sent as it is, whatever is accepted, and does not vary on Accept-Encoding', async () => {
    const small = await fetchRaw(t, '/v1/docs/static/index.css', { 'accept-encoding': 'br, gzip' })
    expect(small.status).toBe(200)
    expect(small.body.length).toBeLessThan(MIN_COMPRESSED_BYTES)
    expect(small.headers['content-encoding']).toBeUndefined()
    expect(varyOf(small)).not.toContain('Accept-Encoding')
    const again = await fetchRaw(t, '/v1/docs/static/index.css', {
      'if-none-match': String(small.headers.etag),
    })
    expect(again.status).toBe(304)
  })

  test('a file asked for by range comes as it is, from the file server (206)', async () => {
    const path = '/v1/docs/static/swagger-ui-bundle.js'
    const whole = await fetchRaw(t, path)
    const part = await fetchRaw(t, path, { range: 'bytes=100-199', 'accept-encoding': 'br' })
    expect(part.status).toBe(206)
    expect(part.headers['content-encoding']).toBeUndefined()
    expect(part.body.equals(whole.body.subarray(100, 200))).toBe(true)
  })

  test('If-Match naming another version is 412 with the Error body; naming this one, 200', async () => {
    const path = '/v1/docs/static/swagger-ui-bundle.js'
    const { headers } = await fetchRaw(t, path, { 'accept-encoding': 'gzip' })
    const stale = await fetchRaw(t, path, { 'accept-encoding': 'gzip', 'if-match': '"stale"' })
    expect(stale.status).toBe(412)
    expect(JSON.parse(stale.body.toString())).toMatchObject({ code: 'precondition_failed', status: 412 })
    const current = await fetchRaw(t, path, { 'accept-encoding': 'gzip', 'if-match': String(headers.etag) })
    expect(current.status).toBe(200)
  })
})

describe('compressed once per process', () => {
  test('requests, for however many Hosts, compress nothing again and get the same bytes', async () => {
    const fresh = await serveTestApp()
    try {
      const before = compressionCount()
      for (const path of TARGETS) await untilCoded(fresh, path, 'br')
      // A brotli and a gzip each: the two files, and the document's prefix in JSON and in YAML.
      expect(compressionCount() - before).toBe(8)
      const bodies = new Map<string, Buffer>()
      for (let round = 0; round < 5; round++) {
        for (const path of TARGETS) {
          for (const coding of ['br', 'gzip']) {
            const answer = await fetchRaw(fresh, path, { 'accept-encoding': coding })
            expect(answer.headers['content-encoding']).toBe(coding)
            const first = bodies.get(`${path} ${coding}`) ?? answer.body
            expect(answer.body.equals(first)).toBe(true)
            bodies.set(`${path} ${coding}`, first)
          }
        }
        const host = `shop${round}.example`
        const document = await fetchRaw(fresh, '/v1/openapi.json', { host, 'accept-encoding': 'br' })
        expect(JSON.parse(brotliDecompressSync(document.body).toString()).servers[0].url).toBe(
          `http://${host}/v1`,
        )
      }
      expect(compressionCount() - before).toBe(8)
    } finally {
      await fresh.close()
    }
  }, 120_000)

  test('the compressed answers count against the per-IP limit of the public surface', async () => {
    const limited = await serveTestApp({ env: { PETSTORE_PUBLIC_PER_MINUTE: '3' } })
    try {
      const statuses = []
      for (let i = 0; i < 4; i++)
        statuses.push((await fetchRaw(limited, '/v1/openapi.json', { 'accept-encoding': 'br' })).status)
      expect(statuses).toEqual([200, 200, 200, 429])
    } finally {
      await limited.close()
    }
  })
})

describe('the initializer script', () => {
  test('is the one @fastify/swagger-ui itself serves for the page’s options', async () => {
    const bare = Fastify()
    await bare.register(swagger, { openapi: {} })
    await bare.register(swaggerUi, DOCS_PAGE)
    const url = '/v1/docs/static/swagger-initializer.js'
    const own = (await bare.inject({ method: 'GET', url })).rawPayload
    await bare.close()
    expect((await fetchRaw(t, url)).body.equals(own)).toBe(true)
  })
})
