import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { expect, test } from 'vitest'
import type { Db } from '../../src/db/database.js'
import { CATCH_UP_TRANSACTIONS, PUBLISH_BOUND, publishEvents } from '../../src/events/events.publisher.js'
import { seqOfEventId } from '../../src/events/events.repository.js'
import { createFanOut } from '../../src/webhooks/fan-out.js'
import { ownerIdOf } from '../../src/webhooks/owner.js'
import { build, type TestApp } from '../helpers.js'
import { stepOf } from '../webhooks/step-harness.js'

/**
 * PostgreSQL numbers events by moving them from `event_outbox` under the publishers' lock. After a while
 * with no publisher (dispatchers failing or frozen while requests write), the outbox holds more than one
 * transaction can move within the deadline: every publication moves at most PUBLISH_BOUND events, and
 * those that must see every committed event numbered catch up over bounded transactions of their own.
 * Publications are counted by a trigger on `events` that logs each statement's rows with its transaction.
 */

/** More than two publications' worth: `[1 … BACKLOG]` in the outbox's order. */
const BACKLOG = 2 * PUBLISH_BOUND + 500

/** `count` pets' events committed to the outbox, their objects `{"n": from … from + count - 1}` in id order. */
async function fillOutbox(db: Db, count: number, from = 1): Promise<void> {
  for (let start = 0; start < count; start += 5_000) {
    const first = from + start
    const last = from + Math.min(count, start + 5_000) - 1
    await sql`insert into event_outbox (type, api_key_id, resource_version, object, created_at)
      select 'pet.created', null, 1, '{"n":' || n || '}', ${Date.UTC(2027, 0, 1)}
      from generate_series(${first}::int, ${last}::int) as n order by n`.execute(db)
  }
}

/** From now on, every statement that writes `events` logs its rows and its transaction. */
async function logPublications(db: Db): Promise<void> {
  await sql`create table publication_log (id serial primary key, txid bigint not null, moved bigint not null)`.execute(
    db,
  )
  await sql`create function log_publication() returns trigger language plpgsql as $$
    begin
      insert into publication_log (txid, moved) select txid_current(), count(*) from new_rows;
      return null;
    end $$`.execute(db)
  await sql`create trigger events_published after insert on events referencing new table as new_rows
    for each statement execute function log_publication()`.execute(db)
}

/** Events each committed transaction numbered, in the order they began numbering. */
async function publications(db: Db): Promise<number[]> {
  const { rows } = await sql<{ moved: number }>`
    select sum(moved)::int as moved from publication_log group by txid order by min(id)`.execute(db)
  return rows.map((row) => row.moved)
}

/** The `n` of every numbered change's event (test events aside), in the order of their ids. */
async function numbered(db: Db): Promise<number[]> {
  const rows = await db
    .selectFrom('events')
    .select('object')
    .where('type', '<>', 'ping')
    .orderBy('seq')
    .execute()
  return rows.map((row) => (JSON.parse(row.object) as { n: number }).n)
}

const oneTo = (count: number) => Array.from({ length: count }, (_, index) => index + 1)

async function backlogged(context: Parameters<typeof build>[0], count = BACKLOG) {
  const t = await build(context, { env: { PETSTORE_WEBHOOKS_ALLOW_PRIVATE: '1' } })
  const { db } = t.deps.database
  await logPublications(db)
  await fillOutbox(db, count)
  return { t, db, key: await t.issueKey() }
}

/** A walk of GET /v1/events along its cursors: the `n` of every event it sees, in the order seen. */
async function walkEvents(t: TestApp, key: string): Promise<number[]> {
  const seen: number[] = []
  let cursor: string | undefined = ''
  while (cursor !== undefined) {
    const url: string = `/v1/events?limit=100${cursor && `&cursor=${cursor}`}`
    const response = await t.app.inject({ method: 'GET', url, headers: t.auth(key) })
    expect(response.statusCode).toBe(200)
    const page: { data: { object: { n: number } } }[] = response.json()
    seen.push(...page.map((event) => event.data.object.n))
    cursor = /[?&]cursor=([^&>]+)/.exec(String(response.headers.link ?? ''))?.[1]
  }
  return seen
}

test('one publication numbers at most PUBLISH_BOUND events, the oldest, and says more are left', async (context) => {
  const { t, db } = await backlogged(context)
  const handle = t.deps.database
  expect(await handle.write((trx) => publishEvents(handle, trx))).toEqual({
    published: PUBLISH_BOUND,
    more: true,
  })
  expect(await numbered(db)).toEqual(oneTo(PUBLISH_BOUND))
  expect(await handle.write((trx) => publishEvents(handle, trx))).toEqual({
    published: PUBLISH_BOUND,
    more: true,
  })
  expect(await handle.write((trx) => publishEvents(handle, trx))).toEqual({ published: 500, more: false })
  expect(await numbered(db)).toEqual(oneTo(BACKLOG))
})

test('the dispatcher numbers a backlog one bounded transaction a step, asking for the next step at once, in commit order', async (context) => {
  const { t, db } = await backlogged(context)
  const steps = stepOf(t.deps.database, ownerIdOf(randomUUID()), [])
  const results = []
  for (let step = 0; step < 10; step++) {
    const result = await steps.step(true)
    results.push(result)
    if (!result.more) break
  }
  expect(results).toEqual([
    { busy: true, more: true },
    { busy: true, more: true },
    { busy: false, more: false },
  ])
  expect(await publications(db)).toEqual([PUBLISH_BOUND, PUBLISH_BOUND, 500])
  expect(await numbered(db)).toEqual(oneTo(BACKLOG))
  expect(await db.selectFrom('event_outbox').select('id').execute()).toEqual([])
})

test('a walk of GET /v1/events that starts after a backlog sees every event of it, in commit order, numbered in bounded transactions', async (context) => {
  const { t, db, key } = await backlogged(context)
  expect(await walkEvents(t, key)).toEqual(oneTo(BACKLOG))
  const moved = await publications(db)
  expect(Math.max(...moved)).toBeLessThanOrEqual(PUBLISH_BOUND)
  expect(moved.reduce((sum, count) => sum + count, 0)).toBe(BACKLOG)
})

test('GET /v1/events behind more than its catch-up numbers answers 503 with Retry-After, keeps what it numbered, and answers once the rest is', async (context) => {
  const backlog = CATCH_UP_TRANSACTIONS * PUBLISH_BOUND + 1
  const { t, db, key } = await backlogged(context, backlog)
  const list = () => t.app.inject({ method: 'GET', url: '/v1/events?limit=1', headers: t.auth(key) })
  const behind = await list()
  expect(behind.statusCode).toBe(503)
  expect(behind.headers['retry-after']).toBe('1')
  expect(behind.json()).toMatchObject({ code: 'unavailable' })
  expect(await publications(db)).toEqual(Array(CATCH_UP_TRANSACTIONS).fill(PUBLISH_BOUND))
  expect((await list()).statusCode).toBe(200)
  expect(await numbered(db)).toEqual(oneTo(backlog))
})

test('an endpoint created after a backlog takes none of its events and every one committed after it', async (context) => {
  const { t, db, key } = await backlogged(context)
  const created = await t.app.inject({
    method: 'POST',
    url: '/v1/webhook_endpoints',
    headers: t.auth(key),
    payload: { url: 'http://127.0.0.1:9/in', events: ['*'] },
  })
  expect(created.statusCode).toBe(201)
  await fillOutbox(db, 3, BACKLOG + 1)
  const handle = t.deps.database
  await handle.write((trx) => publishEvents(handle, trx))
  await handle.write((trx) => createFanOut(handle).fanOut(trx, t.clock.now(), BACKLOG + 3))
  const taken = await db
    .selectFrom('webhook_attempts')
    .innerJoin('events', 'events.seq', 'webhook_attempts.event_seq')
    .select('events.object')
    .orderBy('events.seq')
    .execute()
  expect(taken.map((row) => row.object)).toEqual([1, 2, 3].map((k) => `{"n":${BACKLOG + k}}`))
  expect(Math.max(...(await publications(db)))).toBeLessThanOrEqual(PUBLISH_BOUND)
})

test('an endpoint re-enabled after a backlog takes only the events committed after it, and a test event sent after another backlog is numbered after all of it', async (context) => {
  const t = await build(context, { env: { PETSTORE_WEBHOOKS_ALLOW_PRIVATE: '1' } })
  const { db } = t.deps.database
  const key = await t.issueKey()
  const api = (method: 'POST' | 'PATCH', url: string, payload?: object) =>
    t.app.inject({ method, url: `/v1${url}`, headers: t.auth(key), ...(payload && { payload }) })
  const endpoint = (
    await api('POST', '/webhook_endpoints', { url: 'http://127.0.0.1:9/in', events: ['*'] })
  ).json()
  const path = `/webhook_endpoints/${endpoint.id}`
  expect((await api('PATCH', path, { status: 'disabled' })).statusCode).toBe(200)
  await logPublications(db)
  await fillOutbox(db, BACKLOG)
  expect((await api('PATCH', path, { status: 'enabled' })).statusCode).toBe(200)
  const last = await db
    .selectFrom('events')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .executeTakeFirstOrThrow()
  const row = await db.selectFrom('webhook_endpoints').select('enabled_after_seq').executeTakeFirstOrThrow()
  expect(row.enabled_after_seq).toBe(last.seq)
  await fillOutbox(db, BACKLOG, BACKLOG + 1)
  const ping = await api('POST', `${path}/test`)
  expect(ping.statusCode).toBe(202)
  // Numbered after every change committed before it: the whole second backlog, caught up first.
  expect(await numbered(db)).toEqual(oneTo(2 * BACKLOG))
  const changes = await db
    .selectFrom('events')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .where('type', '<>', 'ping')
    .executeTakeFirstOrThrow()
  expect(seqOfEventId(ping.json().eventId)).toBeGreaterThan(Number(changes.seq))
  expect(Math.max(...(await publications(db)))).toBeLessThanOrEqual(PUBLISH_BOUND)
})
