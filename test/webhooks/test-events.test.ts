import { Webhook } from 'standardwebhooks'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  everyEventFannedOut,
  type Receiver,
  startReceiver,
  startWebhookApp,
  type WebhookApp,
} from './harness.js'

/**
 * `POST /v1/webhook_endpoints/{id}/test` (CONTRACT §14, round 4) through the service as `npm start` runs it,
 * with real receivers: a `ping` goes to the endpoint tested only, signed, retried and logged like any
 * delivery, and only its account sees it. The per-minute limit is in test-events-limit.test.ts (a fake clock).
 */
let t: WebhookApp
let owner: string
let tested: Receiver
let other: Receiver

beforeEach(async () => {
  t = await startWebhookApp()
  owner = await t.issueKey()
  tested = await startReceiver()
  other = await startReceiver()
})
afterEach(async () => {
  await t.close()
  await tested.close()
  await other.close()
})

async function subscribe(receiver: Receiver, events: string[], key = owner) {
  const url = `http://hooks.test:${receiver.port}/in`
  const response = await t.api(key, 'POST', '/webhook_endpoints', { url, events })
  expect(response.status).toBe(201)
  return (await response.json()) as { id: string; secret: string }
}

async function sendTest(endpointId: string, key = owner): Promise<string> {
  const response = await t.api(key, 'POST', `/webhook_endpoints/${endpointId}/test`)
  expect(response.status).toBe(202)
  const body = await response.json()
  expect(body).toEqual({ eventId: expect.stringMatching(/^evt_\d{16}$/) })
  return body.eventId
}

const deliveriesOf = async (endpointId: string) =>
  (await t.api(owner, 'GET', `/webhook_endpoints/${endpointId}/deliveries`)).json()

describe('a test event', () => {
  it('reaches the endpoint tested, whatever it subscribes to, signed, and in its delivery log', async () => {
    const endpoint = await subscribe(tested, ['order.*'])
    const eventId = await sendTest(endpoint.id)
    const [got] = await tested.waitFor(1)
    expect(got?.headers['webhook-id']).toBe(eventId)
    const verified = new Webhook(endpoint.secret).verify(
      got?.body ?? '',
      got?.headers as Record<string, string>,
    )
    expect(verified).toEqual({
      id: eventId,
      type: 'ping',
      createdAt: expect.any(String),
      resourceVersion: 1,
      data: { object: { endpointId: endpoint.id } },
    })
    expect(await (await t.api(owner, 'GET', `/events/${eventId}`)).text()).toBe(got?.body)
    await expect
      .poll(() => deliveriesOf(endpoint.id), { timeout: 10_000 })
      .toEqual([
        expect.objectContaining({ eventId, attempt: 1, status: 'succeeded', httpStatus: 200, error: null }),
      ])
  })

  it("goes to no other endpoint, not even the same account's `*` subscriber, and no other account sees it", async () => {
    const endpoint = await subscribe(tested, ['pet.created'])
    const everything = await subscribe(other, ['*'])
    const stranger = await t.issueKey()
    const strangerHook = await subscribe(other, ['*'], stranger)
    const eventId = await sendTest(endpoint.id)
    await tested.waitFor(1)
    // A change after it: once every event is fanned out and the other endpoints have it, a ping bound for
    // them would be in their logs before it (the fan-out takes events in commit order).
    await t.api(owner, 'POST', '/pets', { name: 'Rex', categoryId: 1 })
    await everyEventFannedOut(t)
    await other.waitFor(2)
    expect(other.received.map((got) => JSON.parse(got.body).type)).toEqual(['pet.created', 'pet.created'])
    const logged = await deliveriesOf(everything.id)
    expect(logged.map((attempt: { eventId: string }) => attempt.eventId)).not.toContain(eventId)
    const testedGot = await tested.waitFor(2)
    expect(testedGot.map((got) => JSON.parse(got.body).type)).toEqual(['ping', 'pet.created'])

    expect((await t.api(stranger, 'GET', `/events/${eventId}`)).status).toBe(404)
    expect(await (await t.api(stranger, 'GET', '/events?type=ping')).json()).toEqual([])
    const strangerSees = await (await t.api(stranger, 'GET', '/events')).json()
    expect(strangerSees.map((event: { type: string }) => event.type)).toEqual(['pet.created'])
    const ownerSees = await (await t.api(owner, 'GET', '/events?type=ping')).json()
    expect(ownerSees.map((event: { id: string }) => event.id)).toEqual([eventId])
    const strangerLog = await t.api(stranger, 'GET', `/webhook_endpoints/${strangerHook.id}/deliveries`)
    expect((await strangerLog.json()).map((attempt: { eventId: string }) => attempt.eventId)).not.toContain(
      eventId,
    )
  })

  it('is retried after a failure with the same webhook-id and body', async () => {
    let calls = 0
    tested.answer = () => ({ status: ++calls === 1 ? 500 : 204 })
    const endpoint = await subscribe(tested, ['pet.deleted'])
    const eventId = await sendTest(endpoint.id)
    const got = await tested.waitFor(2)
    expect(got.map((request) => request.headers['webhook-id'])).toEqual([eventId, eventId])
    expect(got[1]?.body).toBe(got[0]?.body)
    await expect
      .poll(() => deliveriesOf(endpoint.id), { timeout: 10_000 })
      .toMatchObject([
        { eventId, attempt: 2, status: 'succeeded', httpStatus: 204 },
        { eventId, attempt: 1, status: 'failed', httpStatus: 500 },
      ])
  })

  it('is sent again only to the endpoint it tests, however the redelivery is asked for', async () => {
    const endpoint = await subscribe(tested, ['order.placed'])
    const everything = await subscribe(other, ['*'])
    const eventId = await sendTest(endpoint.id)
    await tested.waitFor(1)
    const again = await t.api(owner, 'POST', `/events/${eventId}/redeliver`)
    expect(again.status).toBe(202)
    expect(await again.json()).toEqual({ eventId, endpointIds: [endpoint.id] })
    const [, second] = await tested.waitFor(2)
    expect(second?.headers['webhook-id']).toBe(eventId)
    const elsewhere = await t.api(owner, 'POST', `/events/${eventId}/redeliver`, {
      endpointId: everything.id,
    })
    expect(elsewhere.status).toBe(409)
    expect(await elsewhere.json()).toMatchObject({
      code: 'conflict',
      message: `${eventId} is a test event of ${endpoint.id}: it can be sent to ${endpoint.id} only`,
    })
    const named = await t.api(owner, 'POST', `/events/${eventId}/redeliver`, { endpointId: endpoint.id })
    expect(await named.json()).toEqual({ eventId, endpointIds: [endpoint.id] })
    await tested.waitFor(3)
    expect(await deliveriesOf(everything.id)).toEqual([])
  })

  it('is refused to a read key (403), for an unknown, deleted or other account’s endpoint (404), and a disabled one (409)', async () => {
    const endpoint = await subscribe(tested, ['*'])
    const reader = await t.issueKey('read')
    const read = await t.api(reader, 'POST', `/webhook_endpoints/${endpoint.id}/test`)
    expect(read.status).toBe(403)
    expect(await read.json()).toMatchObject({ code: 'insufficient_scope' })
    const stranger = await t.issueKey()
    for (const [key, id] of [
      [stranger, endpoint.id],
      [owner, 'we_424242'],
    ]) {
      const missing = await t.api(key ?? '', 'POST', `/webhook_endpoints/${id}/test`)
      expect(missing.status).toBe(404)
      expect(await missing.json()).toMatchObject({
        code: 'not_found',
        message: `webhook endpoint ${id} does not exist`,
      })
    }
    const malformed = await t.api(owner, 'POST', '/webhook_endpoints/abc/test')
    expect(malformed.status).toBe(400)
    // A ping is asked for, never subscribed to.
    const url = `http://hooks.test:${tested.port}/in`
    expect((await t.api(owner, 'POST', '/webhook_endpoints', { url, events: ['ping'] })).status).toBe(400)
    await t.api(owner, 'PATCH', `/webhook_endpoints/${endpoint.id}`, { status: 'disabled' })
    const disabled = await t.api(owner, 'POST', `/webhook_endpoints/${endpoint.id}/test`)
    expect(disabled.status).toBe(409)
    expect(await disabled.json()).toMatchObject({
      code: 'conflict',
      message: `webhook endpoint ${endpoint.id} is disabled: enable it to send it a test event`,
    })
    await t.api(owner, 'DELETE', `/webhook_endpoints/${endpoint.id}`)
    expect((await t.api(owner, 'POST', `/webhook_endpoints/${endpoint.id}/test`)).status).toBe(404)
    expect(await (await t.api(owner, 'GET', '/events?type=ping')).json()).toEqual([])
    expect(tested.received).toEqual([])
  })
})
