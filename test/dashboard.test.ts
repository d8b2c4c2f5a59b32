import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib'
import Fastify from 'fastify'
import { afterEach, describe, expect, test } from 'vitest'
import { DASHBOARD_CSP, readBuiltDashboard } from '../src/dashboard/assets.js'
import { registerDashboardRoutes } from '../src/dashboard/dashboard.routes.js'
import { registerErrorHandler } from '../src/http/error-handler.js'
import { buildTestApp, type TestApp } from './helpers.js'

/** The partner dashboard as served (CONTRACT §15); the page itself is driven in test/browser/dashboard. */

let t: TestApp | undefined
afterEach(async () => {
  await t?.close()
  t = undefined
})

const built = readBuiltDashboard()
if (!built) throw new Error('the dashboard is not built: npm test builds it first (pretest)')
const assetNames = [...built.assets.keys()]

describe('GET /dashboard', () => {
  test('is the built page, with its CSP and the headers of §15, no key needed, revalidated on each visit', async () => {
    t = await buildTestApp()
    const page = await t.app.inject({ method: 'GET', url: '/dashboard' })
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(page.headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    )
    expect(page.headers['content-security-policy']).toBe(DASHBOARD_CSP)
    expect(page.headers['referrer-policy']).toBe('no-referrer')
    expect(page.headers['x-content-type-options']).toBe('nosniff')
    expect(page.headers['cache-control']).toBe('no-cache')
    // Loads only its own hashed assets, by absolute path, and nothing inline.
    const loaded = [...page.body.matchAll(/<(?:script\b[^>]*src|link rel="stylesheet" href)="([^"]+)"/g)].map(
      (match) => match[1],
    )
    expect(loaded.sort()).toEqual(assetNames.map((name) => `/dashboard/${name}`).sort())
    // Every script is a file of its own (an empty element with a src), and there is no style in the page.
    for (const script of page.body.match(/<script\b[^>]*>[^<]*<\/script>/g) ?? [])
      expect(script).toMatch(/^<script type="module" src="\/dashboard\/[^"]+"><\/script>$/)
    expect(page.body.match(/<script\b/g)).toHaveLength(1)
    expect(page.body).not.toMatch(/<style|style=/)
    expect((await t.app.inject({ method: 'HEAD', url: '/dashboard' })).statusCode).toBe(200)
    // The page too goes out compressed once its coding is ready.
    await expect
      .poll(
        async () =>
          (await t?.app.inject({ url: '/dashboard', headers: { 'accept-encoding': 'gzip' } }))?.headers[
            'content-encoding'
          ],
        { timeout: 30_000, interval: 100 },
      )
      .toBe('gzip')
  })

  test('its hashed assets are cached for a year; an unknown file is the Error 404', async () => {
    t = await buildTestApp()
    expect(assetNames.some((name) => /^app-[A-Z0-9]{8}\.js$/.test(name))).toBe(true)
    expect(assetNames.some((name) => /^app-[A-Z0-9]{8}\.css$/.test(name))).toBe(true)
    for (const name of assetNames) {
      const asset = await t.app.inject({ method: 'GET', url: `/dashboard/${name}` })
      expect(asset.statusCode).toBe(200)
      expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable')
      expect(asset.headers['content-type']).toMatch(name.endsWith('.js') ? /^text\/javascript/ : /^text\/css/)
      expect(asset.rawPayload.equals(built.assets.get(name)?.body ?? Buffer.alloc(0))).toBe(true)
    }
    for (const url of ['/dashboard/app.js', '/dashboard/..%2Fmanifest.json', '/dashboard/manifest.json']) {
      const missing = await t.app.inject({ method: 'GET', url })
      expect([url, missing.statusCode, missing.json().code]).toEqual([url, 404, 'not_found'])
    }
  })

  test('its script and styles go out in br or gzip as Accept-Encoding allows, compressed once', async () => {
    t = await buildTestApp()
    for (const name of assetNames) {
      const url = `/dashboard/${name}`
      const identity = built.assets.get(name)?.body ?? Buffer.alloc(0)
      // The first request starts the compression; the codings are sent once they are ready.
      await expect
        .poll(
          async () =>
            (await t?.app.inject({ url, headers: { 'accept-encoding': 'br' } }))?.headers['content-encoding'],
          { timeout: 30_000, interval: 100 },
        )
        .toBe('br')
      const br = await t.app.inject({ url, headers: { 'accept-encoding': 'gzip, br' } })
      expect(br.headers.vary).toContain('Accept-Encoding')
      expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable')
      expect(brotliDecompressSync(br.rawPayload).equals(identity)).toBe(true)
      await expect
        .poll(
          async () =>
            (await t?.app.inject({ url, headers: { 'accept-encoding': 'gzip' } }))?.headers[
              'content-encoding'
            ],
          { timeout: 30_000, interval: 100 },
        )
        .toBe('gzip')
      const gzip = await t.app.inject({ url, headers: { 'accept-encoding': 'gzip' } })
      expect(gunzipSync(gzip.rawPayload).equals(identity)).toBe(true)
      const plain = await t.app.inject({ url, headers: { 'accept-encoding': 'identity' } })
      expect(plain.headers['content-encoding']).toBeUndefined()
      expect(plain.rawPayload.equals(identity)).toBe(true)
    }
  })

  test('is limited per client IP with the docs page, and never counted against a key', async () => {
    t = await buildTestApp({ env: { PETSTORE_PUBLIC_PER_MINUTE: '3' } })
    const { key } = await t.deps.apiKeys.issueApiKey({ plan: 'free' })
    const auth = { authorization: `Bearer ${key}` }
    const statuses = []
    for (let i = 0; i < 4; i++)
      statuses.push((await t.app.inject({ method: 'GET', url: '/dashboard', headers: auth })).statusCode)
    expect(statuses).toEqual([200, 200, 200, 429])
    const standing = await t.app.inject({ method: 'GET', url: '/v1/rate_limit', headers: auth })
    expect(standing.json().limits.minute.remaining).toBe(standing.json().limits.minute.limit)
  })
})

test('the whole page (page, script, styles; no fonts) weighs at most 150 KB compressed', () => {
  const bodies = [built.page, ...[...built.assets.values()].map((asset) => asset.body)]
  const compressed = bodies.reduce((sum, body) => sum + gzipSync(body, { level: 9 }).length, 0)
  expect(compressed).toBeLessThanOrEqual(150 * 1024)
})

test('without a build, /dashboard says so in a 404 and the rest of the service runs', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'petstore-dashboard-'))
  expect(readBuiltDashboard(pathToFileURL(`${folder}/`))).toBeUndefined()
  const app = Fastify({ logger: false })
  registerErrorHandler(app)
  registerDashboardRoutes(app, undefined)
  app.get('/other', async () => ({ ok: true }))
  for (const url of ['/dashboard', `/dashboard/${assetNames[0]}`]) {
    const response = await app.inject({ url })
    expect([url, response.statusCode, response.json().message]).toEqual([
      url,
      404,
      'the partner dashboard is not built on this server (npm run build)',
    ])
  }
  expect((await app.inject({ url: '/other' })).statusCode).toBe(200)
  await app.close()
  // A build that wrote a kind of file the service does not serve is refused at start, not served wrongly.
  writeFileSync(join(folder, 'manifest.json'), JSON.stringify({ page: 'index.html', assets: ['x.exe'] }))
  writeFileSync(join(folder, 'index.html'), '')
  writeFileSync(join(folder, 'x.exe'), '')
  expect(() => readBuiltDashboard(pathToFileURL(`${folder}/`))).toThrow('a kind of file it does not serve')
})
