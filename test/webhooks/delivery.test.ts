import { Webhook } from 'standardwebhooks'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type Receiver, startReceiver, startWebhookApp, type WebhookApp } from './harness.js'

let t: WebhookApp
let receiver: Receiver
let key: string

beforeEach(async () => {
  t = await startWebhookApp()
  receiver = await startReceiver()
  key = await t.issueKey()
})
afterEach(async () => {
  await t.close()
  await receiver.close()
})

async function subscribe(events: string[] = ['*'], owner = key) {
  const response = await t.api(owner, 'POST', '/webhook_endpoints', {
    url: `http://hooks.test:${receiver.port}/in`,
    events,
  })
  expect(response.status).toBe(201)
  return (await response.json()) as { id: string; secret: string }
}

describe('delivery', () => {
  it('signs each event as Standard Webhooks verifies it, with the event as the body', async () => {
    const endpoint = await subscribe()
    const created = await t.api(key, 'POST', '/pets', { name: 'Rex', categoryId: 1, status: 'available' })
    const pet = await created.json()
    const [got] = await receiver.waitFor(1)
    const verified = new Webhook(endpoint.secret).verify(
      got?.body ?? '',
      got?.headers as Record<string, string>,
    )
    expect(verified).toMatchObject({ type: 'pet.created', resourceVersion: 1, data: { object: pet } })
    expect(got?.headers['webhook-id']).toMatch(/^evt_\d{16}$/)
    expect(got?.headers['user-agent']).toMatch(/^petstore-webhooks\//)
    expect(got?.headers['content-type']).toBe('application/json')
    const event = await (await t.api(key, 'GET', `/events/${got?.headers['webhook-id']}`)).text()
    expect(event).toBe(got?.body)
    const metrics = async () => (await fetch(`${t.origin}/metrics`)).text()
    await expect.poll(metrics).toMatch(/^petstore_webhook_deliveries_total\{outcome="succeeded"\} 1$/m)
    expect(await metrics()).toMatch(/^petstore_webhook_delivery_lag_seconds_count 1$/m)
  })

  it('retries a failing receiver with the same webhook-id and body until it succeeds', async () => {
    let calls = 0
    receiver.answer = () => ({ status: ++calls < 3 ? 500 : 204 })
    const endpoint = await subscribe(['pet.created'])
    await t.api(key, 'POST', '/pets', { name: 'Tom', categoryId: 2 })
    const got = await receiver.waitFor(3)
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1)
    expect(new Set(got.map((r) => r.body)).size).toBe(1)
    await expect
      .poll(async () => (await t.api(key, 'GET', `/webhook_endpoints/${endpoint.id}/deliveries`)).json())
      .toMatchObject([
        { attempt: 3, status: 'succeeded', httpStatus: 204, error: null },
        { attempt: 2, status: 'failed', httpStatus: 500 },
        { attempt: 1, status: 'failed', httpStatus: 500 },
      ])
  })
})
