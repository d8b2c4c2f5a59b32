import { describe, expect, test } from 'vitest'
import { accessibilityProblems, keepScreenshot, keysCommand, signIn } from './dashboard-fixture.js'
import { useDashboardSession } from './dashboard-session.js'

/** The partner dashboard signed in with keys other than the demo's: a read key, a banned key, a revoked one. */
const session = useDashboardSession()

describe('other keys', () => {
  test('a read key sees everything and changes nothing: the controls are disabled and say why', async () => {
    // An account with an endpoint (and a delivery), whose key is then made read-only.
    const { id, key } = await keysCommand(session.demo, ['create', '--plan', 'pro'])
    const endpoint = await session.api(key, '/webhook_endpoints', {
      method: 'POST',
      body: JSON.stringify({ url: session.receiver.url, events: ['*'] }),
    })
    await session.api(key, `/webhook_endpoints/${endpoint.id}/test`, { method: 'POST' })
    await keysCommand(session.demo, ['update', String(id), '--scope', 'read'])

    await session.freshPage()
    const writes: string[] = []
    session.page.on('request', (request) => {
      if (!['GET', 'HEAD'].includes(request.method())) writes.push(`${request.method()} ${request.url()}`)
    })
    await signIn(session.page, session.demo.origin, key)
    await session.page.locator('#read-only-note').waitFor()
    const card = session.page.locator(`[data-endpoint="${endpoint.id}"]`)
    await expect
      .poll(() => card.locator('.deliveries tbody tr').count(), { timeout: 10_000 })
      .toBeGreaterThan(0)
    const controls = [
      session.page.getByRole('button', { name: 'Add endpoint' }),
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
    expect(await accessibilityProblems(session.page)).toEqual([])
    await keepScreenshot(session.page, 'read-key')
  })

  test('a banned key sees its ban counting down', async () => {
    const { key: banned } = await keysCommand(session.demo, [
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
      await fetch(`${session.demo.origin}/v1/pets`, { headers: { authorization: `Bearer ${banned}` } })
    expect((await session.api(banned, '/rate_limit')).bannedUntil).not.toBeNull()
    await session.freshPage()
    await signIn(session.page, session.demo.origin, banned)
    const countdown = session.page.locator('.ban .countdown')
    const first = await countdown.innerText()
    await expect.poll(() => countdown.innerText(), { timeout: 5_000 }).not.toBe(first)
    await keepScreenshot(session.page, 'banned', 'section:has(#key-title)')
    // Its other calls are refused with the API's message and request id, shown where they failed.
    await expect.poll(() => session.page.locator('.problem .request-id').count()).toBeGreaterThan(0)
    // The browser logs each refused call; those are the only errors.
    expect(session.watch.errors.filter((error) => !/status of 429/.test(error))).toEqual([])
    session.watch.errors.length = 0
  })

  test('a key revoked while the page is open signs the tab out with why, and nothing polls any more', async () => {
    const { id, key } = await keysCommand(session.demo, ['create', '--plan', 'pro'])
    await session.freshPage()
    // The page's timers are the test's: it moves time past every poll once the tab has signed out.
    await session.page.clock.install()
    await signIn(session.page, session.demo.origin, key)
    await session.page.locator('#key-title').waitFor()
    await keysCommand(session.demo, ['revoke', String(id)])
    // The next poll of the limits (every 5 s) is refused with 401: the tab forgets the key and says why.
    await session.page.clock.runFor(5_000)
    const why = session.page.locator('.sign-in .problem')
    await why.waitFor({ timeout: 10_000 })
    expect(await why.innerText()).toMatch(/^Signed out: .*revoked/)
    expect(await session.page.evaluate('sessionStorage.length')).toBe(0)
    // A minute of the page's time later it has asked the API nothing more: the request after the minute
    // is the test's own, the first since.
    const asked: string[] = []
    session.page.on('request', (request) => asked.push(new URL(request.url()).pathname))
    await session.page.clock.runFor(60_000)
    await session.page.evaluate(() => fetch('/healthz').then((response) => response.status))
    expect(asked).toEqual(['/healthz'])
    // The browser logs each refused call; those are the only errors.
    expect(session.watch.errors.filter((error) => !/status of 401/.test(error))).toEqual([])
    session.watch.errors.length = 0
  })
})
