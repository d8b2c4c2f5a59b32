import { afterAll, beforeAll, expect, it } from 'vitest'
import { createPetstoreClient, PetstoreError } from '../../client/src/index.js'
import { verifyWebhook } from '../../client/src/verify-webhook.js'
import { type Receiver, startReceiver, startWebhookApp, type WebhookApp } from '../webhooks/harness.js'

/** The client's webhook and event calls against the real service, and verifyWebhook on real deliveries. */
let t: WebhookApp
let receiver: Receiver
beforeAll(async () => {
  t = await startWebhookApp()
  receiver = await startReceiver()
})
afterAll(async () => {
  await t.close()
  await receiver.close()
})

it('subscribes, verifies a delivery, reads the events and the log, redelivers and sends a test event', async () => {
  const client = createPetstoreClient({
    baseUrl: `${t.origin}/v1`,
    apiKey: await t.issueKey(),
    sleep: async () => {},
  })
  const url = `http://hooks.test:${receiver.port}/in`
  const endpoint = await client.webhooks.createEndpoint({ url, events: ['pet.created'] })
  expect(endpoint.secret).toMatch(/^whsec_/)
  const rex = await client.createPet({ name: 'Rex', categoryId: 1 })
  const [delivery] = await receiver.waitFor(1)
  const event = verifyWebhook(delivery?.body ?? '', delivery?.headers ?? {}, endpoint.secret)
  expect(event).toMatchObject({ type: 'pet.created', resourceVersion: 1, data: { object: rex } })
  expect(() => verifyWebhook(`${delivery?.body} `, delivery?.headers ?? {}, endpoint.secret)).toThrow()
  const other = await client.webhooks.rotateSecret(endpoint.id, 0)
  expect(() => verifyWebhook(delivery?.body ?? '', delivery?.headers ?? {}, other.secret)).toThrow()

  expect((await client.webhooks.listEvents({ type: 'pet.created' })).items).toEqual([event])
  expect(await client.webhooks.getEvent(event.id)).toEqual(event)
  await expect
    .poll(async () => (await client.webhooks.listDeliveries(endpoint.id)).items)
    .toMatchObject([{ eventId: event.id, attempt: 1, status: 'succeeded', httpStatus: 200 }])
  expect(await client.webhooks.redeliver(event.id)).toEqual([endpoint.id])
  const [, again] = await receiver.waitFor(2)
  expect(
    verifyWebhook(again?.body ?? '', new Headers(again?.headers as Record<string, string>), other.secret),
  ).toEqual(event)

  const pingId = await client.webhooks.sendTestEvent(endpoint.id)
  const [, , ping] = await receiver.waitFor(3)
  expect(ping?.headers['webhook-id']).toBe(pingId)
  expect(
    verifyWebhook(ping?.body ?? '', new Headers(ping?.headers as Record<string, string>), other.secret),
  ).toMatchObject({ id: pingId, type: 'ping', data: { object: { endpointId: endpoint.id } } })
  expect((await client.webhooks.listEvents({ type: 'ping' })).items.map((listed) => listed.id)).toEqual([
    pingId,
  ])

  expect((await client.webhooks.updateEndpoint(endpoint.id, { status: 'disabled' })).status).toBe('disabled')
  const refused = await client.webhooks.sendTestEvent(endpoint.id).catch((error: unknown) => error)
  expect(refused).toMatchObject({ code: 'conflict', status: 409 })
  expect((await client.webhooks.listEndpoints()).items).toHaveLength(1)
  await client.webhooks.deleteEndpoint(endpoint.id)
  await expect(client.webhooks.getEndpoint(endpoint.id)).rejects.toBeInstanceOf(PetstoreError)
})

it("an endpoint's test-event limit (429 while the key has requests left) holds that call only, not the client's other calls", async () => {
  const slept: number[] = []
  const client = createPetstoreClient({
    baseUrl: `${t.origin}/v1`,
    apiKey: await t.issueKey(),
    sleep: async (ms) => {
      slept.push(ms)
    },
  })
  const endpoint = await client.webhooks.createEndpoint({
    url: `http://hooks.test:${receiver.port}/in`,
    events: ['*'],
  })
  for (let i = 0; i < 10; i++) await client.webhooks.sendTestEvent(endpoint.id)
  const refused = await client.webhooks.sendTestEvent(endpoint.id).catch((error: unknown) => error)
  expect(refused).toMatchObject({ code: 'rate_limited', status: 429 })
  expect((refused as PetstoreError).rateLimit.remaining).toBeGreaterThan(0)
  // The key's gate was not told to hold every call for the endpoint's Retry-After.
  expect((await client.webhooks.listEndpoints()).items).toHaveLength(1)
  expect(slept).toEqual([])
})
