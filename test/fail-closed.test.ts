import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { registerErrorHandler } from '../src/http/error-handler.js'
import { registerApiScope } from '../src/http/scopes.js'
import { buildTestApp, type TestApp } from './helpers.js'

/**
 * The API is guarded because of where its routes are registered (CONTRACT §12, STYLE "fail closed by
 * structure"): every route in Fastify's own route table is walked, keyless, and must be a 401 with the
 * rate-limit headers unless it is part of the documented public surface.
 */

/** The routes a client may reach without a key, and what they answer: the public surface and the probes. */
const PUBLIC = [
  /^\/$/,
  /^\/v1\/?$/,
  /^\/v1\/openapi\.json$/,
  /^\/v1\/docs(\/.*)?$/,
  /^\/dashboard(\/.*)?$/,
  /^\/(healthz|readyz|metrics)$/,
]

/**
 * Every (method, path) of Fastify's route table, read from its printed radix tree: a path is the labels
 * from the root down, and a node that ends routes lists their methods.
 */
function routeTable(printed: string): { method: string; path: string }[] {
  const routes: { method: string; path: string }[] = []
  const stack: string[] = []
  for (const line of printed.split('\n')) {
    const match = /^((?:│ {3}| {4})*)(?:├── |└── )(.+?)(?: \(([A-Z, ]+)\))?$/.exec(line)
    if (!match) continue
    const depth = (match[1] ?? '').length / 4
    stack.length = depth
    stack.push(match[2] === '(empty root node)' ? '' : (match[2] ?? ''))
    const methods = match[3]
    if (methods) for (const method of methods.split(', ')) routes.push({ method, path: stack.join('') })
  }
  return routes
}

/** A concrete target for a route pattern: parameters and wildcards filled in. */
const targetOf = (path: string) => path.replace(/:[^/]+/g, '1').replace(/\/?\*$/, '/anything')

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp({ env: { CORS_ORIGINS: 'https://shop.example' } })
})
afterAll(() => t.close())

describe('every route of the table', () => {
  test('the table is read whole: every operation of the OpenAPI document and the public surface are in it', async () => {
    const table = new Set(routeTable(t.app.printRoutes()).map(({ method, path }) => `${method} ${path}`))
    // The document is generated from the routes, independently of the printed tree this test parses: each
    // of its operations (the webhook and event routes too) must come out of the parse, or the 401 walk
    // below would skip it.
    const document = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json()
    const operations = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, item]) =>
        Object.keys(item)
          .filter((method) => /^(get|put|post|patch|delete)$/.test(method))
          .map((method) => `${method.toUpperCase()} /v1${path.replace(/\{(\w+)\}/g, ':$1')}`),
    )
    expect(operations.length).toBeGreaterThan(20)
    expect(operations).toEqual(expect.arrayContaining(['POST /v1/webhook_endpoints', 'GET /v1/events']))
    for (const operation of operations) expect(table, operation).toContain(operation)
    for (const route of ['GET /v1/openapi.json', 'GET /healthz', 'GET /readyz'])
      expect(table).toContain(route)
  })

  test('without a key, each is a 401 with the rate-limit headers, or a public route answering for itself', async () => {
    const routes = routeTable(t.app.printRoutes())
    expect(routes.length).toBeGreaterThan(30)
    for (const { method, path } of routes) {
      const target = targetOf(path)
      const response = await t.app.inject({ method: method as 'GET', url: target })
      const where = `${method} ${path} → ${response.statusCode}`
      if (PUBLIC.some((pattern) => pattern.test(target)) || path === '*') {
        expect(response.statusCode, where).not.toBe(401)
        expect(response.statusCode, where).toBeLessThan(500)
        continue
      }
      expect(response.statusCode, where).toBe(401)
      expect(response.headers['www-authenticate'], where).toBe('Bearer')
      expect(response.headers['x-ratelimit-limit'], where).toBe('60')
      expect(response.headers['cache-control'], where).toBe('no-store')
    }
  })
})

describe('a route added to the API scope', () => {
  test('is authenticated, limited, and in the Allow of its path, without being listed anywhere', async () => {
    const app = Fastify()
    registerErrorHandler(app)
    await registerApiScope(app, t.deps, (api) => {
      api.get('/brand-new', async () => ({ ok: true }))
    })
    await app.ready()
    try {
      const keyless = await app.inject({ method: 'GET', url: '/v1/brand-new' })
      expect(keyless.statusCode).toBe(401)
      expect(keyless.headers['x-ratelimit-limit']).toBe('60')
      const key = await t.issueKey()
      const auth = { authorization: `Bearer ${key}` }
      expect((await app.inject({ method: 'GET', url: '/v1/brand-new', headers: auth })).json()).toEqual({
        ok: true,
      })
      const wrongMethod = await app.inject({ method: 'DELETE', url: '/v1/brand-new', headers: auth })
      expect(wrongMethod.statusCode).toBe(405)
      expect(wrongMethod.headers.allow).toBe('GET, HEAD')
      expect((await app.inject({ method: 'GET', url: '/v1/brand-old', headers: auth })).statusCode).toBe(404)
    } finally {
      await app.close()
    }
  })
})
