import { Webhook } from 'standardwebhooks'
import { afterEach, expect, it } from 'vitest'
import { MAX_IN_FLIGHT_PER_ENDPOINT } from '../../src/webhooks/attempts.repository.js'
import { FakeClock, onServices } from '../helpers.js'
import { type Received, type Receiver, startReceiver, startWebhookApp, type WebhookApp } from './harness.js'

/**
 * A URL or a secret change must reach the attempts a dispatcher already holds: a slow partner's lane holds
 * hundreds of them for minutes, and they used to go out with the URL and the secrets copied when they were
 * taken (to a server the partner no longer controls, signed with a leaked secret).
 */

/** Events for the endpoint: its receiver holds the first 4 in flight, the rest wait in its lane. */
const EVENTS = 40

let t: WebhookApp | undefined
const receivers: Receiver[] = []

afterEach(async () => {
  await t?.close()
  t = undefined
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()))
})

async function receiver(answer?: Receiver['answer']): Promise<Receiver> {
  const started = await startReceiver(answer)
  receivers.push(started)
  return started
}

/** An endpoint whose receiver answers nothing until `release` is called. */
async function slowEndpoint(clock?: FakeClock) {
  const app = await startWebhookApp(clock && { clock })
  t = app
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  const slow = await receiver(() => ({ status: 204, until: released }))
  const key = await app.issueKey()
  const url = `http://hooks.test:${slow.port}/old`
  const created = await app.api(key, 'POST', '/webhook_endpoints', { url, events: ['pet.created'] })
  expect(created.status).toBe(201)
  const endpoint = (await created.json()) as { id: string; secret: string }
  const path = `/webhook_endpoints/${endpoint.id}`
  return { t: app, key, endpoint, path, slow, release }
}

/**
 * EVENTS events for the endpoint: 4 of them in flight to its receiver, which holds them, and every other
 * one taken by the dispatcher into the endpoint's lane (pending, held), waiting for a place.
 */
async function backlogQueued({ t, key, slow }: Awaited<ReturnType<typeof slowEndpoint>>) {
  for (let n = 0; n < EVENTS; n++) {
    expect((await t.api(key, 'POST', '/pets', { name: `P${n}`, categoryId: 1 })).status).toBe(201)
  }
  await slow.waitFor(MAX_IN_FLIGHT_PER_ENDPOINT)
  const held = async () => {
    const { n } = await t.deps.database.db
      .selectFrom('webhook_attempts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'pending')
      .where('lease_token', 'is not', null)
      .executeTakeFirstOrThrow()
    return Number(n)
  }
  await expect.poll(held).toBe(EVENTS)
}

/** The deliveries among `got` that verify with `secret` (Standard Webhooks' own check), by webhook-id. */
const verifiedBy = (got: readonly Received[], secret: string) =>
  got.filter((one) => verifies(one, secret)).map((one) => one.headers['webhook-id'])
const ids = (got: readonly Received[]) => got.map((one) => one.headers['webhook-id'])

/** Whether the delivery verifies with `secret`. */
const verifies = (got: Received, secret: string) => {
  try {
    new Webhook(secret).verify(got.body, got.headers as Record<string, string>)
    return true
  } catch {
    return false
  }
}

it('sends no queued attempt to the old URL once a PATCH of the URL has answered', async () => {
  const set = await slowEndpoint()
  await backlogQueued(set)
  const moved = await receiver()
  const url = `http://hooks.test:${moved.port}/new`
  expect((await set.t.api(set.key, 'PATCH', set.path, { url })).status).toBe(200)
  set.release()
  await moved.waitFor(EVENTS - MAX_IN_FLIGHT_PER_ENDPOINT)
  await set.t.server.dispatcher.whenIdle()
  // Only the requests already in flight at the PATCH reached the old URL.
  expect(ids(set.slow.received)).toHaveLength(MAX_IN_FLIGHT_PER_ENDPOINT)
  expect(moved.received.map((got) => got.url)).toEqual(
    Array(EVENTS - MAX_IN_FLIGHT_PER_ENDPOINT).fill('/new'),
  )
})

it('signs no queued attempt with the old secret once a rotation with a grace of 0 has answered', async () => {
  const set = await slowEndpoint()
  await backlogQueued(set)
  const rotation = await set.t.api(set.key, 'POST', `${set.path}/rotate_secret`, { graceSeconds: 0 })
  expect(rotation.status).toBe(200)
  const { secret } = (await rotation.json()) as { secret: string }
  set.release()
  const got = await set.slow.waitFor(EVENTS)
  const before = got.slice(0, MAX_IN_FLIGHT_PER_ENDPOINT)
  const after = got.slice(MAX_IN_FLIGHT_PER_ENDPOINT)
  expect(verifiedBy(before, set.endpoint.secret)).toEqual(ids(before))
  expect(verifiedBy(after, set.endpoint.secret)).toEqual([])
  expect(verifiedBy(after, secret)).toEqual(ids(after))
})

// The fake clock moves the grace's end on SQLite only (PostgreSQL's dispatchers read the database's clock).
it.skipIf(onServices)(
  'signs a queued attempt with a replaced secret only while its grace lasts at the attempt’s start',
  async () => {
    const clock = new FakeClock(Date.now())
    const set = await slowEndpoint(clock)
    const rotation = await set.t.api(set.key, 'POST', `${set.path}/rotate_secret`, { graceSeconds: 1 })
    const { secret } = (await rotation.json()) as { secret: string }
    await backlogQueued(set)
    // Taken within the grace; the grace ends before any of those queued starts.
    clock.advance(1_000)
    set.release()
    const got = await set.slow.waitFor(EVENTS)
    const before = got.slice(0, MAX_IN_FLIGHT_PER_ENDPOINT)
    const after = got.slice(MAX_IN_FLIGHT_PER_ENDPOINT)
    expect(verifiedBy(before, set.endpoint.secret)).toEqual(ids(before))
    expect(verifiedBy(after, set.endpoint.secret)).toEqual([])
    expect(verifiedBy(after, secret)).toEqual(ids(after))
  },
)
