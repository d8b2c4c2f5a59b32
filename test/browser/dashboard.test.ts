import type { Browser, BrowserContext, Page } from 'playwright-core'
import { Webhook } from 'standardwebhooks'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { killService } from '../service-process.js'
import { launchChromium } from './chromium.js'
import {
  accessibilityProblems,
  type Demo,
  eventually,
  keepScreenshot,
  keysCommand,
  signIn,
  startDemo,
  startReceiver,
  watchPage,
} from './dashboard-fixture.js'

/**
 * `npm run test:browser`: the partner dashboard (CONTRACT §15) in Debian's chromium, against the real demo
 * process (`npm run demo`), signed in with the demo's key; endpoints point at a receiver this test runs.
 * Every test ends with no CSP violation and no console error; screenshots land in test-artifacts/.
 */
let demo: Demo
let browser: Browser
let context: BrowserContext | undefined
let page: Page
let watch: Awaited<ReturnType<typeof watchPage>>
const receiver = await startReceiver()

// biome-ignore lint/suspicious/noExplicitAny: the API's JSON, read field by field in assertions
const api = async (key: string, path: string, init: RequestInit = {}): Promise<any> => {
  const response = await fetch(`${demo.origin}/v1${path}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, ...(init.body && { 'content-type': 'application/json' }) },
  })
  return response.json()
}

beforeAll(async () => {
  demo = await startDemo()
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  if (demo) await killService(demo.service)
  receiver.server.close()
})

/** What the render timing reads in the page (tsconfig has no DOM lib). */
interface RenderProbe {
  document: { querySelector(selector: string): unknown }
  performance: { now(): number }
  __clicked: number
}

async function freshPage(width = 1280): Promise<void> {
  const opened = await browser.newContext({ viewport: { width, height: 900 } })
  context = opened
  page = await opened.newPage()
  page.on('dialog', (dialog) => void dialog.accept())
  watch = await watchPage(page)
}

afterEach(async () => {
  if (!context) return
  try {
    expect(await watch.violations()).toEqual([])
    expect(watch.errors).toEqual([])
  } finally {
    await context.close()
    context = undefined
  }
})

describe('signed in with the demo key', () => {
  test('every section shows the account: limits and usage as the API tells them, the endpoint, events, the order', async () => {
    await freshPage()
    // First render with data, timed in the page: from the click on "Sign in" to every section showing its
    // data (reported, not asserted: machines differ).
    await page.goto(`${demo.origin}/dashboard`)
    await page.getByLabel('API key', { exact: true }).fill(demo.key)
    await page.evaluate(`document.querySelector('form button[type=submit]').addEventListener('click', () => {
      window.__clicked = performance.now()
    })`)
    await page.getByRole('button', { name: 'Sign in' }).click()
    const rendered = await page.waitForFunction(
      (selectors: string[]) => {
        // Runs in the page (a function, not a string: the page's CSP forbids eval).
        const view = globalThis as unknown as RenderProbe
        return (
          selectors.every((selector) => view.document.querySelector(selector)) &&
          view.performance.now() - view.__clicked
        )
      },
      ['table.usage', '.chart canvas', '[data-order]', '.events li', '[data-endpoint] .deliveries tbody tr'],
      { polling: 'raf' },
    )
    const renderMs = Math.round(Number(await rendered.jsonValue()))
    console.info(`first render with data: ${renderMs} ms (from the click on Sign in to every section)`)

    const standing = await api(demo.key, '/rate_limit')
    const minute = page.locator('tr[data-window="minute"]')
    expect(await minute.locator('[data-field="limit"]').innerText()).toBe(
      standing.limits.minute.limit.toLocaleString('en-US'),
    )
    expect(await page.locator('tr[data-window="day"] [data-field="limit"]').innerText()).toBe(
      standing.limits.day.limit.toLocaleString('en-US'),
    )
    await expect.poll(() => page.locator('.facts dd').first().innerText()).toBe(standing.plan)

    // The chart's numbers, day by day, are the API's (today's grows with the page's own calls).
    const usage = (await api(demo.key, '/usage?days=30')) as Record<string, string | number>[]
    expect(usage).toHaveLength(30)
    for (const row of usage.slice(1)) {
      const cells = page.locator(`tr[data-day="${row.day}"] td`)
      expect([row.day, ...(await cells.allTextContents())]).toEqual([
        row.day,
        ...['2xx', '4xx', '429', '5xx'].map((name) => Number(row[name]).toLocaleString('en-US')),
      ])
    }
    expect(usage.slice(1).some((row) => Number(row['2xx']) > 0)).toBe(true)
    await expect.poll(() => page.locator('.chart canvas').count()).toBeGreaterThan(0)

    await expect.poll(() => page.locator('[data-endpoint]').count()).toBe(1)
    await expect.poll(() => page.locator('[data-endpoint] .deliveries tbody tr').count()).toBeGreaterThan(0)
    await expect.poll(() => page.locator('.events li').count()).toBeGreaterThan(0)
    await expect.poll(() => page.locator('[data-order]').count()).toBe(1)

    expect(await accessibilityProblems(page)).toEqual([])
    await keepScreenshot(page, 'signed-in')
    for (const section of ['key', 'usage', 'endpoints', 'events', 'orders'])
      await keepScreenshot(page, section, `section:has(#${section}-title)`)
  })

  test('an endpoint is added, tested, redelivered, rotated (both signatures verify), disabled and deleted', async () => {
    await freshPage()
    await signIn(page, demo.origin, demo.key)
    await page.getByLabel('URL', { exact: true }).fill(receiver.url)
    await page.getByLabel('Description (optional)', { exact: true }).fill('browser test receiver')
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    const secret = await page.locator('#secret-value').inputValue()
    expect(secret).toMatch(/^whsec_/)
    await page.getByRole('button', { name: 'I have saved it' }).click()

    const card = page.locator('[data-endpoint]', { hasText: receiver.url })
    await card.getByRole('button', { name: 'Send test event' }).click()
    const eventId = (await card.locator('[role="status"] code').innerText()).trim()
    const ping = await eventually(
      () => receiver.deliveries.find((delivery) => delivery.headers['webhook-id'] === eventId),
      'the test event',
    )
    expect(JSON.parse(ping.body)).toMatchObject({ id: eventId, type: 'ping' })
    expect(new Webhook(secret).verify(ping.body, ping.headers as Record<string, string>)).toBeTruthy()
    const row = card.locator(`tr[data-event="${eventId}"]`)
    await expect.poll(() => row.first().locator('.badge').innerText(), { timeout: 10_000 }).toBe('succeeded')
    await expect
      .poll(() => card.getByTestId('success-rate').innerText(), { timeout: 10_000 })
      .toMatch(/^100% /)

    await row
      .first()
      .getByRole('button', { name: `Redeliver ${eventId}` })
      .click()
    await eventually(
      () =>
        receiver.deliveries.filter((delivery) => delivery.headers['webhook-id'] === eventId).length >= 2
          ? true
          : undefined,
      'the redelivery',
    )

    await card.locator('summary', { hasText: 'Rotate the signing secret' }).click()
    await card.getByLabel('The old secret keeps signing for', { exact: true }).selectOption('3600')
    await card.getByRole('button', { name: 'Rotate secret' }).click()
    const rotated = await page.locator('#secret-value').inputValue()
    expect(rotated).not.toBe(secret)
    await card.getByRole('button', { name: 'Send test event' }).click()
    await expect.poll(() => card.locator('[role="status"] code').innerText()).not.toBe(eventId)
    const second = (await card.locator('[role="status"] code').innerText()).trim()
    const signed = await eventually(
      () => receiver.deliveries.find((delivery) => delivery.headers['webhook-id'] === second),
      'the test event after the rotation',
    )
    expect(String(signed.headers['webhook-signature']).split(' ')).toHaveLength(2)
    for (const key of [secret, rotated])
      expect(new Webhook(key).verify(signed.body, signed.headers as Record<string, string>)).toBeTruthy()
    await keepScreenshot(page, 'endpoint', `[data-endpoint]:has-text("${receiver.url}")`)

    await card.getByRole('button', { name: 'Disable' }).click()
    await expect.poll(() => card.locator('h3 .badge').innerText()).toBe('disabled')
    await card.getByRole('button', { name: 'Delete' }).click()
    await expect.poll(() => page.locator('[data-endpoint]', { hasText: receiver.url }).count()).toBe(0)
    const endpoints = (await api(demo.key, '/webhook_endpoints')) as { url: string }[]
    expect(endpoints.map((endpoint) => endpoint.url)).not.toContain(receiver.url)
  })

  test('sign out leaves nothing in the tab: no key in storage, no cookie', async () => {
    await freshPage()
    await signIn(page, demo.origin, demo.key)
    expect(await page.evaluate('sessionStorage.length')).toBe(1)
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByLabel('API key', { exact: true }).waitFor()
    expect(await page.evaluate('[sessionStorage.length, localStorage.length, document.cookie]')).toEqual([
      0,
      0,
      '',
    ])
    expect(await page.context().cookies()).toEqual([])
    await page.reload()
    await page.getByLabel('API key', { exact: true }).waitFor()
  })

  test('is readable 360 px wide: nothing wider than the screen', async () => {
    await freshPage(360)
    await signIn(page, demo.origin, demo.key)
    await page.locator('table.usage').waitFor({ state: 'attached' })
    // Wide tables scroll inside their own box; nothing else may stick out of the screen.
    const sticking = await page.evaluate(`[...document.querySelectorAll('body *')]
      .filter((element) => element.getBoundingClientRect().right > 361 && !element.closest('.table-wrap'))
      .map((element) => element.tagName + '.' + element.className)`)
    expect(sticking).toEqual([])
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360)
    await keepScreenshot(page, 'narrow')
  })
})

describe('other keys', () => {
  test('a read key sees everything and changes nothing: the controls are disabled and say why', async () => {
    // An account with an endpoint (and a delivery), whose key is then made read-only.
    const { id, key } = await keysCommand(demo, ['create', '--plan', 'pro'])
    const endpoint = await api(key, '/webhook_endpoints', {
      method: 'POST',
      body: JSON.stringify({ url: receiver.url, events: ['*'] }),
    })
    await api(key, `/webhook_endpoints/${endpoint.id}/test`, { method: 'POST' })
    await keysCommand(demo, ['update', String(id), '--scope', 'read'])

    await freshPage()
    const writes: string[] = []
    page.on('request', (request) => {
      if (!['GET', 'HEAD'].includes(request.method())) writes.push(`${request.method()} ${request.url()}`)
    })
    await signIn(page, demo.origin, key)
    await page.locator('#read-only-note').waitFor()
    const card = page.locator(`[data-endpoint="${endpoint.id}"]`)
    await expect
      .poll(() => card.locator('.deliveries tbody tr').count(), { timeout: 10_000 })
      .toBeGreaterThan(0)
    const controls = [
      page.getByRole('button', { name: 'Add endpoint' }),
      card.getByRole('button', { name: 'Send test event' }),
      card.getByRole('button', { name: 'Disable' }),
      card.getByRole('button', { name: 'Delete' }),
      // In closed <details>: hidden until opened, and disabled all the same.
      card.getByRole('button', { name: 'Rotate secret', includeHidden: true }),
      card.getByRole('button', { name: 'Save changes', includeHidden: true }),
      card.getByRole('button', { name: /^Redeliver / }).first(),
    ]
    for (const control of controls) {
      expect(await control.isDisabled()).toBe(true)
      expect(await control.getAttribute('aria-describedby')).toBe('read-only-note')
      await control.click({ force: true, timeout: 1_000 }).catch(() => {})
    }
    expect(writes).toEqual([])
    expect(await accessibilityProblems(page)).toEqual([])
    await keepScreenshot(page, 'read-key')
  })

  test('a banned key sees its ban counting down', async () => {
    const { key: banned } = await keysCommand(demo, [
      'create',
      '--plan',
      'enterprise',
      '--per-minute',
      '1',
      '--per-day',
      '100',
    ])
    // One request admitted, then more refusals than PETSTORE_BAN_AFTER (10): banned for 15 minutes.
    for (let i = 0; i < 13; i++)
      await fetch(`${demo.origin}/v1/pets`, { headers: { authorization: `Bearer ${banned}` } })
    expect((await api(banned, '/rate_limit')).bannedUntil).not.toBeNull()
    await freshPage()
    await signIn(page, demo.origin, banned)
    const countdown = page.locator('.ban .countdown')
    const first = await countdown.innerText()
    await expect.poll(() => countdown.innerText(), { timeout: 5_000 }).not.toBe(first)
    await keepScreenshot(page, 'banned', 'section:has(#key-title)')
    // Its other calls are refused with the API's message and request id, shown where they failed.
    await expect.poll(() => page.locator('.problem .request-id').count()).toBeGreaterThan(0)
    // The browser logs each refused call; those are the only errors.
    expect(watch.errors.filter((error) => !/status of 429/.test(error))).toEqual([])
    watch.errors.length = 0
  })
})
