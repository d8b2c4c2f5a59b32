import { randomUUID } from 'node:crypto'
import { expect, it, type TestContext } from 'vitest'
import { publishEvents } from '../../src/events/events.publisher.js'
import { createEventsRepository } from '../../src/events/events.repository.js'
import {
  createFanOut,
  DEMAND_PROBES,
  eventsPerFanOut,
  FAN_OUT_AHEAD,
  FAN_OUT_EVENTS,
  FAN_OUT_ROWS,
} from '../../src/webhooks/fan-out.js'
import { QUEUE_SIZE } from '../../src/webhooks/lane.js'
import { ownerIdOf } from '../../src/webhooks/owner.js'
import { build } from '../helpers.js'
import { endpointRow, insertEndpointRows } from './harness.js'
import { finishedWhileHeld } from './held-write.js'
import { stepOf } from './step-harness.js'

it('fans an event out to 2,500 endpoints over several transactions, each writing at most FAN_OUT_ROWS attempts', async (context) => {
  const t = await build(context)
  const handle = t.deps.database
  const { db } = handle
  const now = t.clock.now()
  const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
  // Far beyond one account's 10: the bound must hold whatever the number of subscribers.
  const endpoints = Array.from({ length: 2_500 }, (_, index) =>
    endpointRow(account, `https://e${index}.example/`, index % 2 === 0 ? '["pet.*"]' : '["*"]', now),
  )
  await insertEndpointRows(db, endpoints)
  const event = { type: 'pet.created', api_key_id: null, resource_version: 1, object: '{}', created_at: now }
  await db.insertInto('events').values([event, event, event]).execute()
  const fanOut = createFanOut(handle)
  const count = async () =>
    Number(
      (
        await db
          .selectFrom('webhook_attempts')
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .executeTakeFirstOrThrow()
      ).count,
    )
  const written: number[] = []
  const finished: number[] = []
  while (await createEventsRepository(handle).anyWaiting()) {
    const before = await count()
    finished.push(await handle.write((trx) => fanOut.fanOut(trx, now)))
    written.push((await count()) - before)
  }
  expect(Math.max(...written)).toBe(FAN_OUT_ROWS)
  expect(written.reduce((sum, rows) => sum + rows, 0)).toBe(7_500)
  expect(finished.reduce((sum, events) => sum + events, 0)).toBe(3)
  const pairs = await db
    .selectFrom('webhook_attempts')
    .select(['event_seq', 'endpoint_id'])
    .distinct()
    .execute()
  expect(pairs).toHaveLength(7_500)
})

/** Three enabled endpoints of one account, subscribed to everything, and 700 events waiting. */
async function threeEndpointsAnd700Events(context: TestContext) {
  const t = await build(context)
  const handle = t.deps.database
  const { db } = handle
  const now = t.clock.now()
  const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
  await insertEndpointRows(
    db,
    ['a', 'b', 'c'].map((name) => endpointRow(account, `https://${name}.example/`, '["*"]', now)),
  )
  const event = { type: 'pet.created', api_key_id: null, resource_version: 1, object: '{}', created_at: now }
  await db
    .insertInto('events')
    .values(Array.from({ length: 700 }, () => event))
    .execute()
  return { handle, db, now, clock: t.clock }
}

it('looks at as many events per transaction as FAN_OUT_ROWS attempts cover for the endpoints enabled, never fewer than FAN_OUT_EVENTS', async (context) => {
  expect([1, 3, 10, 11, 1_000, 5_000].map(eventsPerFanOut)).toEqual([2_000, 666, 200, 200, 200, 200])
  const { handle, db, now } = await threeEndpointsAnd700Events(context)
  const fanOut = createFanOut(handle)
  // Three fast endpoints: 666 events a transaction (1,998 attempts) where a fixed FAN_OUT_EVENTS fed each
  // lane 200, fewer than it sends between two steps on PostgreSQL.
  expect(await fanOut.demand(now)).toEqual({ kind: 'fan', events: 666 })
  expect(await handle.write((trx) => fanOut.fanOut(trx, now, 666))).toBe(666)
  expect(await handle.write((trx) => fanOut.fanOut(trx, now, 666))).toBe(34)
  const written = await db
    .selectFrom('webhook_attempts')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow()
  expect(Number(written.count)).toBe(2_100)
})

it("a dispatcher's step fans out as many events as eventsPerFanOut gives for the endpoints enabled", async (context) => {
  const { handle, db, clock } = await threeEndpointsAnd700Events(context)
  await stepOf(handle, ownerIdOf(randomUUID()), [], clock).step(true)
  const fanned = await db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('fanned_out', '=', 1)
    .executeTakeFirstOrThrow()
  expect(Number(fanned.count)).toBe(eventsPerFanOut(3))
})

it('waits in the outbox only while every enabled endpoint has FAN_OUT_AHEAD attempts due beyond those the instance holds; retries due later do not count', async (context) => {
  const t = await build(context)
  const handle = t.deps.database
  const { db } = handle
  const now = t.clock.now()
  const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
  const endpoint = (url: string) => endpointRow(account, url, '["*"]', now)
  const [slow, fast] = await db
    .insertInto('webhook_endpoints')
    .values([endpoint('https://slow.example/'), endpoint('https://fast.example/')])
    .returning('id')
    .execute()
  const backlog = (endpointId: number, dueAt: number) =>
    Array.from({ length: FAN_OUT_AHEAD }, (_, index) => ({
      event_seq: index + 1,
      endpoint_id: endpointId,
      attempt: 1,
      status: 'pending',
      due_at: dueAt,
      at: dueAt,
    }))
  const fanOut = createFanOut(handle)
  await db
    .insertInto('webhook_attempts')
    .values(backlog(slow?.id ?? 0, now))
    .execute()
  // One endpoint's backlog, however long, holds back nobody: the other is hungry.
  const fan = { kind: 'fan', events: FAN_OUT_ROWS / 2 }
  expect(await fanOut.demand(now)).toEqual(fan)
  // Retries due later are not work to do now.
  await db
    .insertInto('webhook_attempts')
    .values(backlog(fast?.id ?? 0, now + 60_000))
    .execute()
  expect(await fanOut.demand(now)).toEqual(fan)
  // Every endpoint has FAN_OUT_AHEAD due: events wait, one row each.
  expect(await fanOut.demand(now + 60_000)).toBeUndefined()
  // Unless the asking instance already holds some of them (queued in a lane, in flight): those are being
  // sent, and the lane must not run dry behind a backlog that is its own queue.
  expect(await fanOut.demand(now + 60_000, new Map([[fast?.id ?? 0, 1]]))).toEqual(fan)
  expect(await fanOut.demand(now + 60_000, new Map([[0, 1]]))).toBeUndefined()
})

it('asks at most DEMAND_PROBES endpoints a plan, in turn: a hungry endpoint beyond them is found by a later plan', async (context) => {
  const t = await build(context)
  const { db } = t.deps.database
  const now = t.clock.now()
  const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
  const urls = Array.from({ length: DEMAND_PROBES + 5 }, (_, n) => `https://e${n}.example/`)
  await insertEndpointRows(
    db,
    urls.map((url) => endpointRow(account, url, '["*"]', now)),
  )
  const ids = (await db.selectFrom('webhook_endpoints').select('id').orderBy('id').execute()).map(
    (row) => row.id,
  )
  // Every endpoint but the last has its fill (every partner's server down but one).
  const rows = ids.slice(0, -1).flatMap((endpointId) =>
    Array.from({ length: FAN_OUT_AHEAD }, (_, index) => ({
      event_seq: index + 1,
      endpoint_id: endpointId,
      attempt: 1,
      status: 'pending',
      due_at: now,
      at: now,
    })),
  )
  for (let from = 0; from < rows.length; from += 2_000)
    await db
      .insertInto('webhook_attempts')
      .values(rows.slice(from, from + 2_000))
      .execute()
  const fanOut = createFanOut(t.deps.database)
  expect(await fanOut.demand(now)).toBeUndefined()
  expect(await fanOut.demand(now)).toEqual({ kind: 'fan', events: FAN_OUT_EVENTS })
})

it('a step fans out for an endpoint whose lane holds some of its due attempts: those are not a backlog', async (context) => {
  const t = await build(context)
  const handle = t.deps.database
  const { db } = handle
  const now = t.clock.now()
  const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
  const endpoint = await db
    .insertInto('webhook_endpoints')
    .values(endpointRow(account, 'https://fast.example/', '["*"]', now))
    .returning('id')
    .executeTakeFirstOrThrow()
  const event = { type: 'pet.created', api_key_id: null, resource_version: 1, object: '{}', created_at: now }
  const sent = await db
    .insertInto('events')
    .values(Array.from({ length: FAN_OUT_AHEAD }, () => ({ ...event, fanned_out: 1 })))
    .returning('seq')
    .execute()
  // Due since the epoch: due by the test's clock (SQLite) and by the database's (PostgreSQL) alike.
  const attempt = { endpoint_id: endpoint.id, attempt: 1, status: 'pending', due_at: 0, at: now }
  await db
    .insertInto('webhook_attempts')
    .values(sent.map(({ seq }) => ({ ...attempt, event_seq: seq })))
    .execute()
  // The first step leases the endpoint and queues QUEUE_SIZE of its attempts (its lane starts none).
  const step = stepOf(handle, ownerIdOf(randomUUID()), [], t.clock)
  await step.step(true)
  const held = await db
    .selectFrom('webhook_attempts')
    .select('id')
    .where('lease_token', 'is not', null)
    .execute()
  expect(held).toHaveLength(QUEUE_SIZE)
  // FAN_OUT_AHEAD are due, QUEUE_SIZE of them in the lane: the next event is fanned out, not held back,
  // where counting them all would have held it (the gate as asked without what the lane holds).
  await db.insertInto('events').values(event).execute()
  expect(await createFanOut(handle).demand(t.clock.now())).toBeUndefined()
  await step.step(true)
  expect(await createEventsRepository(handle).anyWaiting()).toBe(false)
})

it('with no endpoint enabled, passes waiting events over in one statement, so retention can delete them; an endpoint created later takes what commits after it', async (context) => {
  const t = await build(context)
  const handle = t.deps.database
  const { db } = handle
  const now = t.clock.now()
  const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
  // A disabled endpoint takes nothing: it must not keep the events waiting either.
  await insertEndpointRows(db, [
    { ...endpointRow(account, 'https://off.example/', '["*"]', now), status: 'disabled' },
  ])
  const event = { type: 'pet.created', api_key_id: null, resource_version: 1, object: '{}', created_at: now }
  await db.insertInto('events').values([event, event]).execute()
  const fanOut = createFanOut(handle)
  const events = createEventsRepository(handle)
  expect(await fanOut.demand(now)).toEqual({ kind: 'pass' })
  expect(await handle.write((trx) => fanOut.passOver(trx))).toBe(2)
  expect(await events.anyWaiting()).toBe(false)
  expect(await db.selectFrom('webhook_attempts').selectAll().execute()).toEqual([])
  const created = await t.deps.webhookEndpoints.create(account, {
    url: 'https://93.184.216.34/in',
    events: ['*'],
  })
  const [later] = await db.insertInto('events').values(event).returning('seq').execute()
  // Enabled since: nothing is passed over any more, the fan-out writes its attempt.
  expect(await fanOut.demand(now)).toEqual({ kind: 'fan', events: FAN_OUT_ROWS })
  expect(await handle.write((trx) => fanOut.passOver(trx))).toBe(0)
  expect(await handle.write((trx) => fanOut.fanOut(trx, now))).toBe(1)
  const attempts = await db
    .selectFrom('webhook_attempts as a')
    .innerJoin('webhook_endpoints as e', 'e.id', 'a.endpoint_id')
    .select(['a.event_seq', 'e.url'])
    .execute()
  expect(attempts).toEqual([{ event_seq: later?.seq, url: created.url }])
})

it('judges each event by the subscription in force at its commit, however late it is fanned out', async (context) => {
  const t = await build(context)
  const handle = t.deps.database
  const { db } = handle
  const key = await t.issueKey()
  const account = (await t.deps.apiKeys.verifyApiKey(key)).id
  const endpoints = t.deps.webhookEndpoints
  const created = await endpoints.create(account, {
    url: 'https://93.184.216.34/in',
    events: ['pet.created'],
  })
  const event = (type: string) => ({
    type,
    api_key_id: null,
    resource_version: 1,
    object: '{}',
    created_at: t.clock.now(),
  })
  const insert = async (type: string) =>
    (await db.insertInto('events').values(event(type)).returning('seq').executeTakeFirstOrThrow()).seq
  // Committed under ["pet.created"], then the subscription changes twice while they wait in the outbox.
  const first = await insert('pet.created')
  const second = await insert('pet.deleted')
  await endpoints.patch(account, created.id, { events: ['pet.deleted'] })
  const third = await insert('pet.created')
  const fourth = await insert('pet.deleted')
  await endpoints.patch(account, created.id, { events: ['*'] })
  const fifth = await insert('pet.updated')
  const fanOut = createFanOut(handle)
  while (await createEventsRepository(handle).anyWaiting())
    await handle.write((trx) => fanOut.fanOut(trx, t.clock.now()))
  const attempts = await db.selectFrom('webhook_attempts').select('event_seq').orderBy('event_seq').execute()
  expect(attempts.map((row) => row.event_seq)).toEqual([first, fourth, fifth])
  expect(second).toBeLessThan(third)
  // Once nothing waits, the earlier subscriptions are forgotten.
  await handle.write((trx) => fanOut.pruneSubscriptions(trx))
  expect(await db.selectFrom('webhook_subscription_history').selectAll().execute()).toEqual([])
})

it('two PATCHes with no event between them: the events waiting are judged by the first, whatever order the kept rows are stored in', async (context) => {
  const t = await build(context)
  const handle = t.deps.database
  const { db } = handle
  const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
  const endpoints = t.deps.webhookEndpoints
  const created = await endpoints.create(account, {
    url: 'https://93.184.216.34/in',
    events: ['pet.created'],
  })
  const event = { type: 'pet.created', api_key_id: null, resource_version: 1, object: '{}', created_at: 0 }
  const waiting = (await db.insertInto('events').values(event).returning('seq').executeTakeFirstOrThrow()).seq
  // Neither PATCH's subscription held when `waiting` committed: the one before them did.
  await endpoints.patch(account, created.id, { events: ['pet.deleted'] })
  await endpoints.patch(account, created.id, { events: ['order.placed'] })
  // Neither database promises to read rows back in the order they were written (on PostgreSQL an update
  // or a vacuum moves them): store the kept rows last first, as they were.
  const kept = await db.selectFrom('webhook_subscription_history').selectAll().execute()
  expect(kept).toHaveLength(2)
  await db.deleteFrom('webhook_subscription_history').execute()
  for (const row of kept.reverse()) await db.insertInto('webhook_subscription_history').values(row).execute()
  const fanOut = createFanOut(handle)
  while (await createEventsRepository(handle).anyWaiting())
    await handle.write((trx) => fanOut.fanOut(trx, t.clock.now()))
  const attempts = await db.selectFrom('webhook_attempts').select('event_seq').execute()
  expect(attempts).toEqual([{ event_seq: waiting }])
})

it('an endpoint created or re-enabled takes only the events that commit after it, however late they are fanned out', async (context) => {
  const t = await build(context)
  const handle = t.deps.database
  const { db } = handle
  const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
  const endpoints = t.deps.webhookEndpoints
  const event = { type: 'pet.created', api_key_id: null, resource_version: 1, object: '{}', created_at: 0 }
  const insert = async () =>
    (await db.insertInto('events').values(event).returning('seq').executeTakeFirstOrThrow()).seq
  const paused = await endpoints.create(account, { url: 'https://93.184.216.34/paused', events: ['*'] })
  await endpoints.patch(account, paused.id, { status: 'disabled' })
  const before = await insert()
  const fresh = await endpoints.create(account, { url: 'https://93.184.216.34/fresh', events: ['*'] })
  await endpoints.patch(account, paused.id, { status: 'enabled' })
  const after = await insert()
  // Both events still wait in the outbox: each endpoint is judged against their commits, not against now.
  const fanOut = createFanOut(handle)
  while (await createEventsRepository(handle).anyWaiting())
    await handle.write((trx) => fanOut.fanOut(trx, t.clock.now()))
  const attempts = await db
    .selectFrom('webhook_attempts as a')
    .innerJoin('webhook_endpoints as e', 'e.id', 'a.endpoint_id')
    .select(['a.event_seq', 'e.url'])
    .orderBy('e.url')
    .execute()
  expect(before).toBeLessThan(after)
  expect(attempts).toEqual([
    { event_seq: after, url: fresh.url },
    { event_seq: after, url: paused.url },
  ])
})

it('concurrent PATCHes of one endpoint take turns: each keeps the subscription the one before it left', async (context) => {
  const t = await build(context)
  const { db } = t.deps.database
  const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
  const endpoints = t.deps.webhookEndpoints
  const created = await endpoints.create(account, { url: 'https://93.184.216.34/in', events: ['*'] })
  const types = [
    'pet.created',
    'pet.updated',
    'pet.deleted',
    'order.placed',
    'order.approved',
    'order.cancelled',
  ] as const
  // At once: on PostgreSQL each PATCH's transaction runs on a connection of its own.
  await Promise.all(types.map((type) => endpoints.patch(account, created.id, { events: [type] })))
  const last = (await endpoints.get(account, created.id)).events
  const kept = await db.selectFrom('webhook_subscription_history').select('events').execute()
  // One chain: the first subscription, then every PATCH's but the last one's, each kept once.
  const expected = ['*', ...types.filter((type) => type !== last[0])].map((type) => JSON.stringify([type]))
  expect(kept.map((row) => row.events).sort()).toEqual(expected.sort())
})

it('fans out nothing to the endpoints of an account whose key was revoked or has expired, and again once renewed', async (context) => {
  const t = await build(context)
  const handle = t.deps.database
  const { db } = handle
  const now = t.clock.now()
  const accounts = []
  for (const expiresAt of [undefined, undefined, now + 1_000]) {
    const { key } = await t.deps.apiKeys.issueApiKey({ plan: 'pro', ...(expiresAt && { expiresAt }) })
    accounts.push((await t.deps.apiKeys.verifyApiKey(key)).id)
  }
  // The third account's key expires a second from now.
  const [live, revoked] = accounts as [number, number, number]
  for (const account of accounts) {
    await t.deps.webhookEndpoints.create(account, { url: 'https://93.184.216.34/in', events: ['*'] })
  }
  await t.deps.apiKeys.revokeApiKey(revoked)
  t.clock.advance(2_000)
  const event = { type: 'pet.created', api_key_id: null, resource_version: 1, object: '{}', created_at: now }
  await db.insertInto('events').values(event).execute()
  const fanOut = createFanOut(handle)
  await handle.write((trx) => fanOut.fanOut(trx, t.clock.now()))
  const targets = await db
    .selectFrom('webhook_attempts as a')
    .innerJoin('webhook_endpoints as e', 'e.id', 'a.endpoint_id')
    .select('e.api_key_id')
    .execute()
  expect(targets.map((row) => row.api_key_id)).toEqual([live])
  // The expired key renewed (`keys update --expires`): its endpoints take the next event again.
  const [, , expired] = accounts as [number, number, number]
  await t.deps.apiKeys.updateApiKey(expired, { expiresAt: null })
  await db
    .insertInto('events')
    .values({ ...event, created_at: t.clock.now() })
    .execute()
  await handle.write((trx) => fanOut.fanOut(trx, t.clock.now()))
  const after = await db
    .selectFrom('webhook_attempts as a')
    .innerJoin('webhook_endpoints as e', 'e.id', 'a.endpoint_id')
    .select('e.api_key_id')
    .orderBy('a.id')
    .execute()
  expect(after.map((row) => row.api_key_id)).toEqual([live, live, expired])
})

/**
 * Retention forgets kept subscriptions under the publishers' lock (PostgreSQL), which a PATCH takes before it
 * publishes and keeps the subscription it replaces: without it, a PATCH that committed between retention's
 * read of the oldest waiting event and its delete lost the subscription its just-published event needed.
 */
it('retention forgets kept subscriptions only once the publisher in flight has committed', async (context) => {
  const t = await build(context)
  const handle = t.deps.database
  const pruned = await finishedWhileHeld(
    handle,
    (trx) => publishEvents(handle, trx),
    () => handle.write((trx) => createFanOut(handle).pruneSubscriptions(trx)),
  )
  expect(pruned).toBe(false)
})
