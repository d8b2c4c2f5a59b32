import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Resolve } from '../../src/webhooks/address.js'
import { loopbackResolve, type Receiver, startReceiver, startWebhookApp, type WebhookApp } from './harness.js'

let t: WebhookApp
let canary: Receiver
let key: string
let lookups = 0

/** `rebind.test` answers a public address to the first lookup and loopback to every later one. */
const rebinding: Resolve = async (hostname) => {
  if (hostname !== 'rebind.test') return loopbackResolve(hostname)
  return [{ address: ++lookups === 1 ? '93.184.216.34' : '127.0.0.1', family: 4 }]
}

beforeAll(async () => {
  canary = await startReceiver()
  // The address rule on (no PETSTORE_WEBHOOKS_ALLOW_PRIVATE); staging allows plain http.
  t = await startWebhookApp({
    env: { PETSTORE_WEBHOOKS_ALLOW_PRIVATE: '0', PETSTORE_ENV: 'staging' },
    resolve: rebinding,
  })
  key = await t.issueKey()
})
afterAll(async () => {
  await t.close()
  await canary.close()
})

describe('only public addresses', () => {
  it.each([
    ['http://127.0.0.1:9/', /127\.0\.0\.1.*loopback/],
    ['http://2130706433/', /loopback/],
    ['http://0x7f.1/', /loopback/],
    ['http://0177.0.0.1/', /loopback/],
    ['http://[::ffff:127.0.0.1]/', /loopback/],
    ['http://[::1]/', /loopback/],
    ['http://0.0.0.0/', /unspecified/],
    ['http://169.254.169.254/latest/meta-data/', /link-local/],
    ['http://10.0.0.1/', /private/],
    ['http://192.168.1.1/', /private/],
    ['http://100.64.0.1/', /100\.64\.0\.1/],
    ['http://[fd00::1]/', /unique/],
    ['http://224.0.0.1/', /multicast/],
    ['http://hooks.test/', /resolves to a loopback address/],
    ['http://user:secret@example.com/', /password/],
    ['http://nowhere.invalid/', /resolve/],
  ])('refuses %s at registration with a 400 naming the reason', async (url, reason) => {
    const response = await t.api(key, 'POST', '/webhook_endpoints', { url, events: ['*'] })
    expect(response.status).toBe(400)
    const body = await response.json()
    expect(body.code).toBe('invalid_request')
    expect(body.message).toMatch(reason)
  })

  it('judges the address again at every attempt: a name that rebinds to loopback reaches nothing', async () => {
    const url = `http://rebind.test:${canary.port}/`
    const created = await t.api(key, 'POST', '/webhook_endpoints', { url, events: ['*'] })
    expect(created.status).toBe(201)
    const endpoint = await created.json()
    await t.api(key, 'POST', '/pets', { name: 'Rex', categoryId: 1 })
    const failures = async () =>
      (await t.api(key, 'GET', `/webhook_endpoints/${endpoint.id}/deliveries?status=failed`)).json()
    await expect.poll(failures).toContainEqual(
      expect.objectContaining({
        httpStatus: null,
        error: expect.stringMatching(/resolves to a loopback address/),
      }),
    )
    expect(lookups).toBeGreaterThanOrEqual(2)
    expect(canary.received).toHaveLength(0)
  })
})
