import { readFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { type ServedApp, serveTestApp } from '../helpers.js'
import { ROOT } from '../service-process.js'
import { launchChromium } from './chromium.js'

/**
 * @petstore/client as a browser loads it: its built ES modules (client/dist, what the package exports)
 * imported by a page of the service's own origin in chromium, calling the real API with the browser's
 * fetch, AbortSignal and crypto.randomUUID.
 */

const DIST = join(ROOT, 'client', 'dist')
let t: ServedApp
let browser: Browser
let page: Page
const pageErrors: string[] = []

beforeAll(async () => {
  t = await serveTestApp()
  browser = await launchChromium()
  page = await browser.newPage()
  page.on('pageerror', (error) => pageErrors.push(error.message))
  // The built package under /client/ on the page's origin, as a bundler or a static server would serve it.
  await page.route(`${t.origin}/client/*.js`, (route) =>
    route.fulfill({
      contentType: 'text/javascript',
      body: readFileSync(join(DIST, basename(new URL(route.request().url()).pathname)), 'utf8'),
    }),
  )
  await page.goto(`${t.origin}/v1/docs`)
})

afterAll(async () => {
  await browser?.close()
  await t?.close()
})

test('the built client runs in chromium: creates a pet, lists it, and throws a typed PetstoreError', async () => {
  const apiKey = await t.issueKey()
  // A script of the page's own (a string: the test runner would rewrite a function's import()).
  const outcome = (await page.evaluate(`(async () => {
    const { createPetstoreClient, PetstoreError } = await import('/client/index.js')
    const options = ${JSON.stringify({ baseUrl: t.baseUrl, apiKey })}
    const client = createPetstoreClient(options)
    const created = await client.createPet({ name: 'Browser Rex', categoryId: 7, status: 'available' })
    const page = await client.listPets({ limit: 5 })
    const failure = await createPetstoreClient({ ...options, apiKey: 'ps_live_nope' }).listPets().catch((error) => error)
    return {
      created,
      listed: page.pets,
      error: failure instanceof PetstoreError ? { status: failure.status, code: failure.code } : String(failure),
      rateLimit: client.rateLimit,
    }
  })()`)) as Record<string, unknown>
  expect(outcome.created).toEqual({
    id: expect.any(Number),
    name: 'Browser Rex',
    categoryId: 7,
    status: 'available',
  })
  expect(outcome.listed).toEqual([outcome.created])
  expect(outcome.error).toEqual({ status: 401, code: 'unauthorized' })
  expect(outcome.rateLimit).toMatchObject({ limit: expect.any(Number), remaining: expect.any(Number) })
  expect(pageErrors).toEqual([])
})
