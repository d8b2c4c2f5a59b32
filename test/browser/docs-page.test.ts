import { mkdirSync, readFileSync, statSync } from 'node:fs'
import { request } from 'node:http'
import { fileURLToPath } from 'node:url'
import type { Browser, Page, Request } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { type ServedApp, serveTestApp } from '../helpers.js'
import { launchChromium } from './chromium.js'

/**
 * `npm run test:browser`: /v1/docs in Debian's chromium (installed by scripts/test-browser.sh), driven by
 * playwright-core against the real app listening on a loopback port.
 */
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url))
const SCREENSHOT = `${ARTIFACTS}docs-page.png`

let t: ServedApp | undefined
let browser: Browser | undefined
let page: Page
let origin: string
const requests: Request[] = []
/** Requests that got their response body or failed. */
const ended = new Set<Request>()
const consoleErrors: string[] = []
const pageErrors: string[] = []
const failedRequests: string[] = []
const badResponses: string[] = []

beforeAll(async () => {
  t = await serveTestApp()
  origin = t.origin
  browser = await launchChromium()
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  page.on('request', (request) => requests.push(request))
  page.on('requestfinished', (request) => ended.add(request))
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text())
  })
  page.on('pageerror', (error) => pageErrors.push(error.message))
  page.on('requestfailed', (request) => {
    ended.add(request)
    failedRequests.push(`${request.url()}: ${request.failure()?.errorText}`)
  })
  page.on('response', (response) => {
    if (response.status() >= 400) badResponses.push(`${response.status()} ${response.url()}`)
  })
  const response = await page.goto(`${origin}/v1/docs`)
  expect(response?.status()).toBe(200)
  // Swagger UI fetches the document and then renders one block per operation.
  for (const operationId of ['listPets', 'createPet', 'getPet'])
    await page.waitForSelector(`#operations-pets-${operationId}`, { state: 'visible' })
  // Whatever the page loads after rendering (validator badge, fonts, icons) counts too.
  await page.waitForLoadState('networkidle')
})

afterAll(async () => {
  await browser?.close()
  await t?.close()
})

/** The Content-Encoding of `path` asked for in `accept` (node:http, which decodes nothing). */
function contentEncoding(path: string, accept: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const headers = { 'accept-encoding': accept }
    const sent = request(`${origin}${path}`, { headers, agent: false }, (response) => {
      response.resume()
      response.on('end', () => resolve(response.headers['content-encoding']))
    })
    sent.on('error', reject)
    sent.end()
  })
}

/** What one operation block shows: method, path, whether it is struck through as deprecated. */
async function operationBlock(operationId: string, tag = 'pets') {
  const block = page.locator(`#operations-${tag}-${operationId}`)
  const path = block.locator('.opblock-summary-path, .opblock-summary-path__deprecated')
  return {
    visible: await block.isVisible(),
    method: (await block.locator('.opblock-summary-method').innerText()).trim(),
    path: await path.getAttribute('data-path'),
    pathText: (await path.innerText()).replace(/\s+/g, ''),
    deprecated: await block.evaluate((element) => element.classList.contains('opblock-deprecated')),
    struckThrough: await path.evaluate((element) => {
      // Runs in the page (tsconfig has no DOM lib): the style Swagger UI's CSS gives the path.
      const view = element.ownerDocument.defaultView as unknown as {
        getComputedStyle(element: unknown): { textDecorationLine: string }
      }
      return view.getComputedStyle(element).textDecorationLine
    }),
  }
}

/** The head of one top-level schema of the Schemas section, and the schema's own article. */
function schemaBlock(name: string) {
  const head = ':scope > .json-schema-2020-12-head'
  const article = page.locator('section.models article[data-json-schema-level="0"]').filter({
    has: page.locator(`${head} .json-schema-2020-12__title`, { hasText: new RegExp(`^${name}$`) }),
  })
  return {
    article,
    toggle: () => article.locator(`${head} .json-schema-2020-12-accordion`).click(),
    type: () => article.locator(`${head} .json-schema-2020-12__attribute--primary`).innerText(),
  }
}

describe('/v1/docs in chromium', () => {
  test('is titled "Petstore API reference"', async () => {
    expect(await page.title()).toBe('Petstore API reference')
  })

  // The spec's three, the key's standing, and the experimental pet lifecycle, store, webhooks and events
  // (CONTRACT §10, §11, §14).
  test('shows every operation of the document, and only those', async () => {
    const document = (await (await fetch(`${origin}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>
    }
    const operations = Object.values(document.paths).flatMap((item) => Object.keys(item))
    expect(operations.length).toBeGreaterThanOrEqual(23)
    expect(await page.locator('.opblock').count()).toBe(operations.length)
    expect(await operationBlock('placeOrder', 'store')).toEqual({
      visible: true,
      method: 'POST',
      path: '/store/orders',
      pathText: '/store/orders',
      deprecated: false,
      struckThrough: 'none',
    })
    expect(await operationBlock('updatePet')).toMatchObject({
      visible: true,
      method: 'PATCH',
      path: '/pets/{petId}',
    })
    expect(await operationBlock('listPets')).toEqual({
      visible: true,
      method: 'GET',
      path: '/pets',
      pathText: '/pets',
      deprecated: false,
      struckThrough: 'none',
    })
    expect(await operationBlock('createPet')).toEqual({
      visible: true,
      method: 'POST',
      path: '/pets',
      pathText: '/pets',
      deprecated: false,
      struckThrough: 'none',
    })
  })

  test("shows the project's own head: no framework logo or document box, an introduction to keys, limits, pages and errors", async () => {
    expect(await page.locator('.topbar').count()).toBe(0)
    expect(await page.locator('img[src*="logo"], .topbar-wrapper svg').count()).toBe(0)
    expect(await page.locator('input.download-url-input').count()).toBe(0)
    expect(await page.locator('a[href$="/v1/docs/json"]:visible').count()).toBe(0)
    const intro = await page.locator('.information-container .description').innerText()
    for (const words of ['Getting a key', 'npm run demo', 'Limits', 'Retry-After', 'Pages', 'requestId'])
      expect(intro).toContain(words)
  })

  test('offers this server first, and never another environment at this address', async () => {
    const options = await page.locator('.servers select option').allInnerTexts()
    expect(options[0]).toContain(`${origin}/v1`)
    expect(options.slice(1).join('\n')).not.toContain(origin)
    expect(options.slice(1)).toEqual([
      expect.stringContaining('Production (address not configured)'),
      expect.stringContaining('Staging (address not configured)'),
    ])
  })

  // Before any operation is opened: the page as a visitor first sees it.
  test('saves a full-page screenshot to test-artifacts/docs-page.png', async () => {
    mkdirSync(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: SCREENSHOT, fullPage: true })
    expect(statSync(SCREENSHOT).size).toBeGreaterThan(0)
    expect(readFileSync(SCREENSHOT).subarray(1, 4).toString('latin1')).toBe('PNG')
  })

  // Swagger UI would label an array of bare `$ref`s `array<any>` until the schema is opened (the document states
  // the items' type beside the `$ref`, openapi.ts): closed, Pets reads `array<object>`; opened, its items are
  // Pet, fields and all.
  test('shows Pets as an array of objects at once, and of Pet once opened', async () => {
    const pets = schemaBlock('Pets')
    expect(await pets.type()).toBe('array<object>')
    await pets.toggle()
    await expect.poll(() => pets.type()).toBe('array<object>')
    const items = pets.article.locator('.json-schema-2020-12-keyword--items > .json-schema-2020-12')
    await items.locator(':scope > .json-schema-2020-12-head .json-schema-2020-12-accordion').click()
    expect(await items.innerText()).toContain('An animal.')
    const fields = items.locator('.json-schema-2020-12-property .json-schema-2020-12__title')
    await expect.poll(() => fields.allInnerTexts()).toEqual(['id', 'name', 'categoryId', 'status'])
  })

  test('shows getPet deprecated: struck through, and a warning when opened', async () => {
    expect(await operationBlock('getPet')).toEqual({
      visible: true,
      method: 'GET',
      path: '/pets/{petId}',
      pathText: '/pets/{petId}',
      deprecated: true,
      struckThrough: 'line-through',
    })
    await page.click('#operations-pets-getPet .opblock-summary-control')
    const body = page.locator('#operations-pets-getPet .opblock-body')
    await body.waitFor({ state: 'visible' })
    expect(await body.innerText()).toContain('Warning: Deprecated')
  })

  // The servers end in /v1 and the paths are relative to them: "Try it out" must call /v1/pets, once.
  test('"Try it out" on listPets, authorized with a key, calls this server\'s /v1/pets and shows 200', async () => {
    const key = await t?.issueKey()
    await page.click('.scheme-container .btn.authorize')
    await page.fill('.modal-ux .auth-container input', key ?? '')
    await page.click('.modal-ux .auth-btn-wrapper .btn.authorize')
    await page.click('.modal-ux .btn-done')
    const block = page.locator('#operations-pets-listPets')
    await block.locator('.opblock-summary-control').click()
    await block.locator('.try-out__btn').click()
    const [response] = await Promise.all([
      page.waitForResponse((candidate) => candidate.url().startsWith(`${origin}/v1/pets`)),
      block.locator('.execute').click(),
    ])
    const called = new URL(response.url())
    expect(`${called.origin}${called.pathname}`).toBe(`${origin}/v1/pets`)
    expect(response.status()).toBe(200)
    await expect
      .poll(() => block.locator('.live-responses-table tbody .response-col_status').innerText())
      .toContain('200')
  })

  // The first visit above came while the files were still being compressed (sent as they are meanwhile).
  test('a first visit once the process has compressed the page gets its files and the document in br', async () => {
    const compressed = [
      '/v1/docs/static/swagger-ui-bundle.js',
      '/v1/docs/static/swagger-ui.css',
      '/v1/docs/json',
    ]
    for (const path of compressed)
      await vi.waitFor(async () => expect(await contentEncoding(path, 'br')).toBe('br'), {
        timeout: 60_000,
        interval: 100,
      })
    const context = await browser?.newContext()
    const visitor = await context?.newPage()
    if (!context || !visitor) throw new Error('no browser')
    const encodings = new Map<string, string | undefined>()
    const errors: string[] = []
    visitor.on('response', (response) =>
      encodings.set(new URL(response.url()).pathname, response.headers()['content-encoding']),
    )
    visitor.on('pageerror', (error) => errors.push(error.message))
    await visitor.goto(`${origin}/v1/docs`)
    await visitor.waitForSelector('#operations-pets-listPets', { state: 'visible' })
    expect(await visitor.locator('.opblock').count()).toBe(await page.locator('.opblock').count())
    await context.close()
    expect(errors).toEqual([])
    for (const path of [...compressed, '/v1/docs/static/swagger-ui-standalone-preset.js'])
      expect([path, encodings.get(path)]).toEqual([path, 'br'])
  })

  // Last, so that it covers everything the tests above made the page do.
  test('logged no console error, threw nothing, and fetched only from this server', async () => {
    // Requests under way (none, unless a test above started some) get 5 s to end; any left are listed.
    await vi
      .waitFor(() => expect(requests.filter((request) => !ended.has(request))).toEqual([]), {
        timeout: 5_000,
        interval: 50,
      })
      .catch(() => undefined)
    // The listener did see the page and the document it renders...
    const urls = requests.map((request) => request.url())
    expect(urls).toContain(`${origin}/v1/docs`)
    expect(urls).toContain(`${origin}/v1/docs/json`)
    // ...and nothing went wrong or elsewhere (another host or port).
    expect({
      consoleErrors,
      pageErrors,
      failedRequests,
      badResponses,
      unfinished: requests.filter((request) => !ended.has(request)).map((request) => request.url()),
      otherOrigins: urls.filter((url) => new URL(url).origin !== origin),
    }).toEqual({
      consoleErrors: [],
      pageErrors: [],
      failedRequests: [],
      badResponses: [],
      unfinished: [],
      otherOrigins: [],
    })
  })
})
