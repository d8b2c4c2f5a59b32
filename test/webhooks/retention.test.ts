import { expect, it } from 'vitest'
import { createEventsRepository, eventIdOf } from '../../src/events/events.repository.js'
import { createAttemptsRepository } from '../../src/webhooks/attempts.repository.js'
import { createClaimsRepository } from '../../src/webhooks/claims.repository.js'
import { createWebhookRetention } from '../../src/webhooks/retention.js'
import { build } from '../helpers.js'
import { recordingHandle } from '../query-plans.js'
import { endpointRow, eventRow, startWebhookApp } from './harness.js'

const DAY = 24 * 60 * 60 * 1000

it('deletes events and attempts older than 30 days, in batches, and keeps the rest and any event not fanned out', async (context) => {
  const t = await build(context)
  const db = t.deps.database.db
  const now = t.clock.now()
  const at = (days: number) => now - days * DAY
  const events = Array.from({ length: 2_500 }, (_, i) => ({
    type: 'pet.created',
    api_key_id: null,
    resource_version: 1,
    object: '{}',
    created_at: i < 2_400 ? at(31) : at(29),
    // The first is old but was never fanned out (a dispatcher was down for a month): still owed.
    fanned_out: i === 0 ? 0 : 1,
  }))
  for (let start = 0; start < events.length; start += 500) {
    await db
      .insertInto('events')
      .values(events.slice(start, start + 500))
      .execute()
  }
  const attempt = (days: number, status: string) => ({
    event_seq: 1,
    endpoint_id: 1,
    attempt: 1,
    status,
    due_at: at(days),
    at: at(days),
  })
  await db
    .insertInto('webhook_attempts')
    .values([
      attempt(31, 'succeeded'),
      attempt(31, 'failed'),
      attempt(29, 'succeeded'),
      attempt(31, 'pending'),
    ])
    .execute()
  await createWebhookRetention(t.deps.database)(now)
  const left = await db.selectFrom('events').select(['seq', 'created_at']).orderBy('seq').execute()
  expect(left).toHaveLength(101)
  expect(left[0]?.seq).toBe(1)
  expect(left.slice(1).every((row) => row.created_at === at(29))).toBe(true)
  // A pending attempt is never purged: it is still owed.
  expect(
    (await db.selectFrom('webhook_attempts').select('status').orderBy('id').execute()).map((r) => r.status),
  ).toEqual(['succeeded', 'pending'])
})

it('ends an attempt whose event was purged instead of claiming it again and again', async (context) => {
  const t = await build(context)
  const { db } = t.deps.database
  const now = t.clock.now()
  const { key } = await t.deps.apiKeys.issueApiKey({ plan: 'pro' })
  const account = (await t.deps.apiKeys.verifyApiKey(key)).id
  const endpoint = await db
    .insertInto('webhook_endpoints')
    .values(endpointRow(account, 'https://x.example/', '["*"]', now))
    .returning('id')
    .executeTakeFirstOrThrow()
  await db
    .insertInto('webhook_attempts')
    .values({ event_seq: 999, endpoint_id: endpoint.id, attempt: 2, status: 'pending', due_at: now, at: now })
    .execute()
  const attempts = createAttemptsRepository(t.deps.database)
  const take = { owner: 'h/1/t', wants: [{ endpointId: endpoint.id, count: 10 }], now }
  expect(
    await t.deps.database.write((trx) => createClaimsRepository(t.deps.database).take(trx, take)),
  ).toEqual([])
  expect(await db.selectFrom('webhook_attempts').select(['status', 'error']).execute()).toEqual([
    { status: 'failed', error: 'the event is older than 30 days' },
  ])
  expect(await attempts.countDue(now, 10)).toBe(0)
})

it('purges along indexes: neither table is read whole', async (context) => {
  const t = await build(context)
  const handle = t.deps.database
  const before = t.clock.now() - 30 * DAY
  const recording = recordingHandle(handle)
  await recording.handle.write(async (trx) => {
    await createEventsRepository(recording.handle).purge(trx, before, 10)
    await createAttemptsRepository(recording.handle).purge(trx, before, 10)
  })
  const plans = await recording.plans()
  expect(plans).toHaveLength(2)
  for (const plan of plans) {
    expect(plan).toMatch(/USING INDEX (events_created_at|webhook_attempts_finished)|Index .*Scan/)
    expect(plan).not.toMatch(/Seq Scan on (events|webhook_attempts)\b|^SCAN (events|webhook_attempts)$/m)
  }
})

it('lists and finds only the events of the last 30 days, whether or not retention has run', async (context) => {
  const t = await build(context)
  const { db } = t.deps.database
  const key = await t.issueKey()
  const now = t.clock.now()
  const insert = async (createdAt: number) =>
    eventIdOf(
      (await db.insertInto('events').values(eventRow(createdAt)).returning('seq').executeTakeFirstOrThrow())
        .seq,
    )
  const old = await insert(now - 30 * DAY - 1)
  const recent = await insert(now - 30 * DAY)
  const get = (url: string) => t.app.inject({ method: 'GET', url, headers: t.auth(key) })
  const listed = await get('/v1/events')
  expect(listed.statusCode).toBe(200)
  expect((listed.json() as { id: string }[]).map((event) => event.id)).toEqual([recent])
  expect((await get(`/v1/events/${recent}`)).statusCode).toBe(200)
  expect((await get(`/v1/events/${old}`)).statusCode).toBe(404)
})

it('with no endpoint at all, the dispatcher passes the events over as they come: none waits, no attempt is written', async () => {
  const t = await startWebhookApp()
  try {
    const key = await t.issueKey()
    for (let index = 0; index < 30; index++)
      expect((await t.api(key, 'POST', '/pets', { name: `P${index}`, categoryId: 1 })).status).toBe(201)
    await t.server.dispatcher.whenIdle()
    const { db } = t.deps.database
    expect(await createEventsRepository(t.deps.database).outbox(10)).toEqual({ depth: 0, oldest: null })
    expect(await db.selectFrom('events').select('seq').execute()).toHaveLength(30)
    expect(await db.selectFrom('webhook_attempts').selectAll().execute()).toEqual([])
  } finally {
    await t.close()
  }
})
