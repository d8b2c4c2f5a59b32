import { expect, it } from 'vitest'
import { createEventsRepository } from '../../src/events/events.repository.js'
import { TOP_ACCOUNTS } from '../../src/http/metrics.js'
import { createAttemptsRepository } from '../../src/webhooks/attempts.repository.js'
import type { Dispatcher } from '../../src/webhooks/dispatcher.port.js'
import { createQueueProbe } from '../../src/webhooks/queue-probe.js'
import { build, type TestApp } from '../helpers.js'
import { recordingHandle } from '../query-plans.js'
import { eventRow } from './harness.js'

/** Every sample of the app's /metrics whose name is `name`, by its labels (`""` when it has none). */
async function samples(t: TestApp, name: string): Promise<Map<string, number>> {
  const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body
  const found = new Map<string, number>()
  for (const line of text.split('\n')) {
    const match = /^(\w+)(\{[^}]*\})? (\S+)$/.exec(line)
    if (match?.[1] === name) found.set(match[2] ?? '', Number(match[3]))
  }
  return found
}

/** A dispatcher that holds these requests in flight per account (the in-flight gauge reads only that). */
const holding = (inFlight: Map<number, number>) => ({ inFlightByAccount: () => inFlight }) as Dispatcher

it('the queue gauges show the outbox depth, its oldest event’s age, the attempts due now, and the busiest accounts only', async (context) => {
  const t = await build(context)
  const { db } = t.deps.database
  const now = Date.now()
  const event = (ageMs: number, fannedOut: number) => ({ ...eventRow(now - ageMs), fanned_out: fannedOut })
  // Three wait, the oldest for 90 s; an older one was fanned out already and does not count.
  await db
    .insertInto('events')
    .values([event(600_000, 1), event(90_000, 0), event(30_000, 0), event(1_000, 0)])
    .execute()
  const attempt = (dueAt: number, status: string) => ({
    event_seq: 1,
    endpoint_id: 1,
    attempt: 1,
    status,
    due_at: dueAt,
    at: dueAt,
  })
  // Two due now; a retry due in an hour and a finished attempt are not.
  await db
    .insertInto('webhook_attempts')
    .values([
      attempt(now - 5_000, 'pending'),
      attempt(now - 1_000, 'pending'),
      attempt(now + 3_600_000, 'pending'),
      attempt(now - 5_000, 'succeeded'),
    ])
    .execute()
  // More accounts than the gauge shows: account n has n requests in flight.
  const accounts = TOP_ACCOUNTS + 5
  const inFlight = new Map(Array.from({ length: accounts }, (_, index) => [index + 1, index + 1]))
  t.deps.metrics.webhooks.probe(createQueueProbe(t.deps.database, holding(inFlight)))

  expect(await samples(t, 'petstore_webhook_outbox_depth')).toEqual(new Map([['', 3]]))
  const [age] = (await samples(t, 'petstore_webhook_outbox_oldest_age_seconds')).values()
  expect(age).toBeGreaterThanOrEqual(90)
  expect(age).toBeLessThan(150)
  expect(await samples(t, 'petstore_webhook_attempts_due')).toEqual(new Map([['', 2]]))
  const busiest = Array.from({ length: TOP_ACCOUNTS }, (_, index) => accounts - index)
  expect(await samples(t, 'petstore_webhook_in_flight')).toEqual(
    new Map(busiest.map((account) => [`{account="${account}"}`, account])),
  )
})

it('/readyz answers while the queue gauges cannot be read, and /metrics keeps their last values', async (context) => {
  const t = await build(context)
  let failing = false
  const probe = createQueueProbe(t.deps.database, holding(new Map()))
  const reading =
    <T>(read: () => Promise<T>) =>
    () =>
      failing ? Promise.reject(new Error('the database is away')) : read()
  t.deps.metrics.webhooks.probe({
    ...probe,
    outbox: reading(probe.outbox),
    due: reading(probe.due),
    circuitOpen: reading(probe.circuitOpen),
  })
  await t.deps.database.db.insertInto('events').values(eventRow(Date.now())).execute()
  expect(await samples(t, 'petstore_webhook_outbox_depth')).toEqual(new Map([['', 1]]))
  failing = true
  expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200)
  const metrics = await t.app.inject({ method: 'GET', url: '/metrics' })
  expect(metrics.statusCode).toBe(200)
  expect(await samples(t, 'petstore_webhook_outbox_depth')).toEqual(new Map([['', 1]]))
})

it('the queue gauges read along indexes and stop counting at their cap: a backlog of millions keeps a scrape short', async (context) => {
  const t = await build(context)
  const { db } = t.deps.database
  const now = Date.now()
  await db
    .insertInto('events')
    .values(Array.from({ length: 5 }, (_, n) => ({ ...eventRow(now - n), fanned_out: n === 4 ? 1 : 0 })))
    .execute()
  const due = { event_seq: 1, endpoint_id: 1, attempt: 1, status: 'pending', due_at: now, at: now }
  await db.insertInto('webhook_attempts').values([due, due, due]).execute()
  const recording = recordingHandle(t.deps.database)
  // Four wait (the fifth was fanned out); the first to be fanned out is the head of the queue.
  expect(await createEventsRepository(recording.handle).outbox(3)).toEqual({ depth: 3, oldest: now })
  expect(await createAttemptsRepository(recording.handle).countDue(now, 2)).toBe(2)
  const plans = await recording.plans()
  expect(plans.length).toBeGreaterThanOrEqual(5)
  for (const plan of plans) {
    expect(plan).not.toMatch(/^SCAN (events|webhook_attempts)$|Seq Scan on (events|webhook_attempts)\b/m)
    expect(plan).not.toMatch(/Scan using (events|webhook_attempts)_pkey on \w+( \w+)?\n(?!\s*Index Cond)/)
  }
})
