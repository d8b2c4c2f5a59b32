import { Webhook } from 'standardwebhooks'
import { afterEach, describe, expect, it } from 'vitest'
import { FAILING_DISABLES_AFTER_MS, JITTER, RETRY_DELAYS_MS } from '../../src/webhooks/schedule.js'
import { FakeClock, onServices } from '../helpers.js'
import {
  everyEventFannedOut,
  type Receiver,
  startReceiver,
  startWebhookApp,
  type WebhookApp,
} from './harness.js'

let t: WebhookApp | undefined
const receivers: Receiver[] = []

afterEach(async () => {
  await t?.close()
  t = undefined
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()))
})

async function setUp(env: Record<string, string> = {}, answer?: Receiver['answer'], clock?: FakeClock) {
  t = await startWebhookApp({ env, ...(clock && { clock }) })
  const receiver = await startReceiver(answer)
  receivers.push(receiver)
  const key = await t.issueKey()
  const url = `http://hooks.test:${receiver.port}/in`
  const response = await t.api(key, 'POST', '/webhook_endpoints', { url, events: ['pet.*'] })
  const endpoint = (await response.json()) as { id: string; secret: string }
  const app = t
  const createPet = (name = 'Rex') => app.api(key, 'POST', '/pets', { name, categoryId: 1 })
  const read = async (path: string) => (await app.api(key, 'GET', path)).json()
  return { t: app, receiver, key, endpoint, createPet, read }
}

/**
 * The endpoint is still enabled; one more failure, now, disables it for its 5 days of failures (`arrived`:
 * the deliveries the receiver has once that one came).
 */
async function disabledByNextFailure(set: Awaited<ReturnType<typeof setUp>>, arrived: number) {
  const { t: app, receiver, endpoint, createPet, read } = set
  expect(await read(`/webhook_endpoints/${endpoint.id}`)).toMatchObject({ status: 'enabled' })
  await createPet('the failure that disables')
  await receiver.waitFor(arrived)
  await app.server.dispatcher.whenIdle()
  expect(await read(`/webhook_endpoints/${endpoint.id}`)).toMatchObject({
    status: 'disabled',
    disabledReason: expect.stringMatching(/5 days/),
  })
}

describe('delivery rules', () => {
  it('disables the endpoint at once on 410, with the reason in its body', async () => {
    const { receiver, endpoint, createPet, read } = await setUp({}, () => ({ status: 410 }))
    await createPet()
    await receiver.waitFor(1)
    await expect
      .poll(() => read(`/webhook_endpoints/${endpoint.id}`))
      .toMatchObject({ status: 'disabled', disabledReason: expect.stringMatching(/410/) })
    await createPet('Tom')
    // Tom's event fanned out: a disabled endpoint took no attempt of it (its log has the first one only).
    await everyEventFannedOut(t as WebhookApp)
    expect(await read(`/webhook_endpoints/${endpoint.id}/deliveries`)).toHaveLength(1)
    expect(receiver.received).toHaveLength(1)
  })

  // On PostgreSQL due times are the database server's clock, which a test cannot move.
  it.skipIf(onServices)(
    'sends nothing before a Retry-After has passed, and the retry once it has',
    async () => {
      let calls = 0
      const clock = new FakeClock(Date.now())
      const { t, receiver, createPet } = await setUp(
        { PETSTORE_WEBHOOK_RETRY_SCALE: '1' },
        () => (++calls === 1 ? { status: 429, headers: { 'retry-after': '120' } } : { status: 200 }),
        clock,
      )
      await createPet()
      await receiver.waitFor(1)
      // Written down (the retry due 120 s from now: the schedule alone says 4 to 6 s, Retry-After is a floor).
      await t.server.dispatcher.whenIdle()
      clock.advance(119_999)
      await t.server.dispatcher.whenIdle()
      expect(receiver.received).toHaveLength(1)
      clock.advance(1)
      await receiver.waitFor(2)
      await t.server.dispatcher.whenIdle()
      expect(receiver.received).toHaveLength(2)
    },
  )

  it('never follows a redirect', async () => {
    const canary = await startReceiver()
    receivers.push(canary)
    const { receiver, endpoint, createPet, read } = await setUp({}, () => ({
      status: 302,
      headers: { location: `http://127.0.0.1:${canary.port}/stolen` },
    }))
    await createPet()
    await receiver.waitFor(1)
    await expect
      .poll(() => read(`/webhook_endpoints/${endpoint.id}/deliveries?status=failed`))
      .toContainEqual(expect.objectContaining({ httpStatus: 302, error: expect.stringMatching(/redirect/) }))
    await receiver.waitFor(3)
    expect(canary.received).toHaveLength(0)
  })

  it('keeps at most 4 requests in flight to one endpoint, and delivers them all', async () => {
    const { receiver, createPet } = await setUp({}, () => ({ status: 200, delayMs: 300 }))
    for (let index = 0; index < 20; index++) await createPet(`P${index}`)
    await receiver.waitFor(20, 20_000)
    expect(receiver.maxInFlight).toBe(4)
  })

  it('signs with every secret still in its grace (a second rotation keeps the first), and with the new one only after a grace of 0', async () => {
    const { t, receiver, key, endpoint, createPet } = await setUp()
    const rotated = await (
      await t.api(key, 'POST', `/webhook_endpoints/${endpoint.id}/rotate_secret`, { graceSeconds: 3600 })
    ).json()
    await createPet()
    const [got] = await receiver.waitFor(1)
    const headers = got?.headers as Record<string, string>
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2)
    expect(new Webhook(endpoint.secret).verify(got?.body ?? '', headers)).toMatchObject({
      type: 'pet.created',
    })
    expect(new Webhook(rotated.secret).verify(got?.body ?? '', headers)).toMatchObject({
      type: 'pet.created',
    })
    // A second rotation within the grace keeps the first secret too: a receiver still on it goes on.
    const twice = await (
      await t.api(key, 'POST', `/webhook_endpoints/${endpoint.id}/rotate_secret`, { graceSeconds: 3600 })
    ).json()
    await createPet('Max')
    const [, middle] = await receiver.waitFor(2)
    const middleHeaders = middle?.headers as Record<string, string>
    expect(middleHeaders['webhook-signature']?.split(' ')).toHaveLength(3)
    for (const secret of [endpoint.secret, rotated.secret, twice.secret]) {
      expect(new Webhook(secret).verify(middle?.body ?? '', middleHeaders)).toBeTruthy()
    }
    // A grace of 0 ends every old secret at once.
    const again = await (
      await t.api(key, 'POST', `/webhook_endpoints/${endpoint.id}/rotate_secret`, { graceSeconds: 0 })
    ).json()
    await createPet('Tom')
    const [, , second] = await receiver.waitFor(3)
    const secondHeaders = second?.headers as Record<string, string>
    expect(secondHeaders['webhook-signature']?.split(' ')).toHaveLength(1)
    expect(() => new Webhook(rotated.secret).verify(second?.body ?? '', secondHeaders)).toThrow()
    expect(() => new Webhook(endpoint.secret).verify(second?.body ?? '', secondHeaders)).toThrow()
    expect(new Webhook(again.secret).verify(second?.body ?? '', secondHeaders)).toBeTruthy()
  })

  it('sends nothing while disabled and does not replay it when enabled again', async () => {
    const { t, receiver, key, endpoint, createPet } = await setUp()
    const path = `/webhook_endpoints/${endpoint.id}`
    await t.api(key, 'PATCH', path, { status: 'disabled' })
    await createPet('missed')
    await everyEventFannedOut(t)
    expect(await (await t.api(key, 'GET', `${path}/deliveries`)).json()).toEqual([])
    await t.api(key, 'PATCH', path, { status: 'enabled' })
    await createPet('seen')
    const [got] = await receiver.waitFor(1)
    // Both events fanned out, and the log holds one attempt, seen's: missed's was never taken, nor replayed.
    await everyEventFannedOut(t)
    const log = await (await t.api(key, 'GET', `${path}/deliveries`)).json()
    expect(log).toHaveLength(1)
    expect(receiver.received).toHaveLength(1)
    expect(JSON.parse(got?.body ?? '').data.object.name).toBe('seen')
  })

  it('does not retry an attempt in flight across a disable and a re-enable: nothing from before the re-enable is sent after it', async () => {
    let answer = () => {}
    const answered = new Promise<void>((resolve) => {
      answer = resolve
    })
    // The first request fails, once the test lets it end; the rest succeed at once.
    const { t, receiver, key, endpoint, createPet, read } = await setUp({}, (request) =>
      request === receiver.received[0] ? { status: 500, until: answered } : { status: 200 },
    )
    const path = `/webhook_endpoints/${endpoint.id}`
    await createPet('in flight')
    await receiver.waitFor(1)
    expect((await t.api(key, 'PATCH', path, { status: 'disabled' })).status).toBe(200)
    expect((await t.api(key, 'PATCH', path, { status: 'enabled' })).status).toBe(200)
    answer()
    // Its outcome written as it came, not retried (retries are due 5 ms on here), and the streak the
    // re-enable reset not started again.
    await expect.poll(() => read(`${path}/deliveries`)).toMatchObject([{ attempt: 1, httpStatus: 500 }])
    await t.server.dispatcher.whenIdle()
    expect(await read(`${path}/deliveries`)).toMatchObject([
      { attempt: 1, status: 'failed', httpStatus: 500 },
    ])
    expect(receiver.received).toHaveLength(1)
    const streak = await t.deps.database.db
      .selectFrom('webhook_endpoints')
      .select(['failures_in_row', 'failing_since'])
      .executeTakeFirstOrThrow()
    expect(streak).toEqual({ failures_in_row: 0, failing_since: null })
    // What commits after the re-enable is sent, and only that.
    await createPet('after')
    await receiver.waitFor(2)
    await t.server.dispatcher.whenIdle()
    expect(receiver.received.map((got) => JSON.parse(got.body).data.object.name)).toEqual([
      'in flight',
      'after',
    ])
  })

  it.skipIf(onServices)(
    'retries on the schedule and never before, gives up after 8 attempts, and disables an endpoint whose deliveries all failed for 5 days',
    async () => {
      const clock = new FakeClock(Date.now())
      const set = await setUp({ PETSTORE_WEBHOOK_RETRY_SCALE: '1' }, () => ({ status: 500 }), clock)
      const { t, receiver, endpoint, createPet, read } = set
      const idle = () => t.server.dispatcher.whenIdle()
      const firstFailureAt = clock.now()
      await createPet()
      await receiver.waitFor(1)
      await idle()
      // Each retry is due its delay (±20 %) after the failure before it: nothing 1 ms before the earliest.
      for (const [index, delayMs] of RETRY_DELAYS_MS.entries()) {
        clock.advance(delayMs * (1 - JITTER) - 1)
        await idle()
        expect(receiver.received).toHaveLength(index + 1)
        clock.advance(delayMs * 2 * JITTER + 1)
        await receiver.waitFor(index + 2)
        await idle()
      }
      // The 8th failed: nothing more, days on (the clock only moves forward).
      clock.set(firstFailureAt + FAILING_DISABLES_AFTER_MS - 1)
      await idle()
      expect(receiver.received).toHaveLength(8)
      expect(await read(`/webhook_endpoints/${endpoint.id}/deliveries?status=pending`)).toEqual([])
      // A failure 1 ms short of 5 days after the first leaves it enabled; one at 5 days disables it.
      await createPet('short of 5 days')
      await receiver.waitFor(9)
      await idle()
      clock.advance(1)
      await disabledByNextFailure(set, 10)
    },
  )

  it.skipIf(onServices)(
    'scales the 5 days after which a failing endpoint is disabled by PETSTORE_WEBHOOK_RETRY_SCALE, as the schedule',
    async () => {
      const clock = new FakeClock(Date.now())
      const scale = 0.01
      const set = await setUp({ PETSTORE_WEBHOOK_RETRY_SCALE: String(scale) }, () => ({ status: 500 }), clock)
      const { t, createPet, receiver } = set
      const idle = () => t.server.dispatcher.whenIdle()
      const firstFailureAt = clock.now()
      await createPet()
      await receiver.waitFor(1)
      await idle()
      // The first retry (due 50 ms ± 20 % later) fails 1 ms short of the scaled 5 days: still enabled.
      clock.set(firstFailureAt + FAILING_DISABLES_AFTER_MS * scale - 1)
      await receiver.waitFor(2)
      await idle()
      clock.advance(1)
      await disabledByNextFailure(set, 3)
    },
  )

  it.skipIf(onServices)(
    'sends nothing more once the account’s key is revoked: a retry due then ends as failed, with why',
    async () => {
      const clock = new FakeClock(Date.now())
      const { t, receiver, key, createPet } = await setUp(
        { PETSTORE_WEBHOOK_RETRY_SCALE: '1' },
        () => ({ status: 500 }),
        clock,
      )
      await createPet()
      await receiver.waitFor(1)
      await t.server.dispatcher.whenIdle()
      await t.deps.apiKeys.revokeApiKey((await t.deps.apiKeys.verifyApiKey(key)).id)
      // Past the retry's latest moment (5 s + 20 %): it is taken, and ends unsent.
      clock.advance((RETRY_DELAYS_MS[0] ?? 0) * (1 + JITTER) + 1)
      await t.server.dispatcher.whenIdle()
      expect(receiver.received).toHaveLength(1)
      const attempts = await t.deps.database.db
        .selectFrom('webhook_attempts')
        .select(['attempt', 'status', 'error'])
        .orderBy('id')
        .execute()
      expect(attempts).toEqual([
        { attempt: 1, status: 'failed', error: expect.stringMatching(/500/) },
        { attempt: 2, status: 'failed', error: "the account's key was revoked" },
      ])
    },
  )

  it('counts an answer slower than PETSTORE_WEBHOOK_TIMEOUT_MS as a failure', async () => {
    const { receiver, endpoint, createPet, read } = await setUp(
      { PETSTORE_WEBHOOK_TIMEOUT_MS: '200' },
      () => ({
        status: 200,
        delayMs: 1000,
      }),
    )
    await createPet()
    await receiver.waitFor(1)
    await expect
      .poll(() => read(`/webhook_endpoints/${endpoint.id}/deliveries?status=failed`))
      .toMatchObject([{ attempt: 1, httpStatus: null, error: expect.stringMatching(/timed out/) }])
  })

  it("does not let a slow endpoint's backlog hold up another endpoint's deliveries", async () => {
    const { t, key, createPet } = await setUp({}, () => ({ status: 200, delayMs: 2000 }))
    // The slow endpoint has 250 due attempts ahead of anything the fast one will get.
    await Promise.all(Array.from({ length: 250 }, (_, i) => createPet(`backlog ${i}`)))
    // Its 250 attempts written before the fast endpoint exists.
    await everyEventFannedOut(t)
    const fast = await startReceiver()
    receivers.push(fast)
    const url = `http://hooks.test:${fast.port}/fast`
    expect((await t.api(key, 'POST', '/webhook_endpoints', { url, events: ['pet.created'] })).status).toBe(
      201,
    )
    for (let i = 0; i < 5; i++) await createPet(`after ${i}`)
    // At 4 at a time and 2 s each, the slow backlog takes two minutes; the fast endpoint waits for none of it.
    await fast.waitFor(5, 5_000)
  })

  it('keeps fanning out new events while a failing endpoint has hundreds of retries waiting', async () => {
    // At the real schedule, 600 failed first attempts leave 600 retries due 5 s on: pending, not due.
    const { t, key, receiver, createPet } = await setUp({ PETSTORE_WEBHOOK_RETRY_SCALE: '1' }, () => ({
      status: 500,
    }))
    await Promise.all(Array.from({ length: 600 }, (_, i) => createPet(`failing ${i}`)))
    await receiver.waitFor(600, 15_000)
    const fresh = await startReceiver()
    receivers.push(fresh)
    const url = `http://hooks.test:${fresh.port}/fresh`
    expect((await t.api(key, 'POST', '/webhook_endpoints', { url, events: ['pet.created'] })).status).toBe(
      201,
    )
    await createPet('new')
    await fresh.waitFor(1, 3_000)
  })
})
