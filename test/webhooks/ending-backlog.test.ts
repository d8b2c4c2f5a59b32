import { randomUUID } from 'node:crypto'
import { expect, it, type TestContext } from 'vitest'
import type { Db } from '../../src/db/database.js'
import type { DbHandle } from '../../src/db/handle.js'
import { ENDING_BATCH } from '../../src/webhooks/attempts.repository.js'
import { createClaimsRepository } from '../../src/webhooks/claims.repository.js'
import { endpointIdOf } from '../../src/webhooks/endpoints.service.js'
import { ownerIdOf } from '../../src/webhooks/owner.js'
import { createSweep } from '../../src/webhooks/sweep.js'
import { build } from '../helpers.js'
import { answered, endedAttempts } from './ended-harness.js'
import { endpointRow, eventRow } from './harness.js'
import { settlingStepOf, stepOf } from './step-harness.js'

/** More pending attempts than two endings' transactions end, and some. */
const BACKLOG = 2 * ENDING_BATCH + 500

/** `count` events, already fanned out, each with a pending attempt of `endpoint` due at `now`. */
async function pendingFor(db: Db, endpoint: number, count: number, now: number): Promise<void> {
  const events = await db
    .insertInto('events')
    .values(Array.from({ length: count }, () => ({ ...eventRow(now), fanned_out: 1 })))
    .returning('seq')
    .execute()
  const pending = { endpoint_id: endpoint, attempt: 1, status: 'pending', due_at: now, at: now }
  await db
    .insertInto('webhook_attempts')
    .values(events.map(({ seq }) => ({ ...pending, event_seq: seq })))
    .execute()
}

/**
 * An account's endpoint with BACKLOG pending attempts (one per event, as a hung endpoint's backlog
 * grows), written straight to the tables.
 */
async function endpointWithBacklog(context: TestContext) {
  const t = await build(context)
  const { db } = t.deps.database
  const now = t.clock.now()
  const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
  const { id } = await db
    .insertInto('webhook_endpoints')
    .values(endpointRow(account, 'https://hooks.example/in', '["*"]', now))
    .returning('id')
    .executeTakeFirstOrThrow()
  const endpoint = Number(id)
  for (let made = 0; made < BACKLOG; made += 500) await pendingFor(db, endpoint, 500, now)
  const countOf = async (status: string, error?: string) => {
    let query = db
      .selectFrom('webhook_attempts')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('endpoint_id', '=', endpoint)
      .where('status', '=', status)
    if (error !== undefined) query = query.where('error', '=', error)
    return Number((await query.executeTakeFirstOrThrow()).count)
  }
  return { t, db, account, endpoint, countOf }
}

it('a DELETE of an endpoint with a backlog ends a bounded batch of it, and the dispatcher the rest, unsent', async (context) => {
  const { t, account, endpoint, countOf } = await endpointWithBacklog(context)
  await t.deps.webhookEndpoints.remove(account, endpointIdOf(endpoint))
  // Its transaction ended one batch, not the whole backlog (a hung endpoint's may hold days of events).
  expect(await countOf('pending')).toBe(BACKLOG - ENDING_BATCH)
  // A dispatcher's steps end the rest, a batch a transaction, with the same reason; nothing is taken.
  const step = stepOf(t.deps.database, 'host/1/sweep', [], t.clock)
  for (let steps = 0; steps < 10 && (await countOf('pending')) > 0; steps++) {
    t.clock.advance(1_000)
    await step.step(true)
  }
  expect(await countOf('pending')).toBe(0)
  expect(await countOf('failed', 'the endpoint was deleted')).toBe(BACKLOG)
})

it('an attempt held for an endpoint disabled since is no longer its holder’s to start, while still pending', async (context) => {
  const { t, db, endpoint } = await endpointWithBacklog(context)
  const owner = 'host/1/held'
  const [first] = await db
    .selectFrom('webhook_attempts')
    .select('id')
    .where('endpoint_id', '=', endpoint)
    .orderBy('id')
    .limit(1)
    .execute()
  const id = Number(first?.id)
  await db.updateTable('webhook_attempts').set({ lease_token: owner }).where('id', '=', id).execute()
  const claims = createClaimsRepository(t.deps.database)
  const asked = { id, endpoint: { id: endpoint } }
  expect(await claims.targetIfOwn(asked, owner)).toBeDefined()
  await db
    .updateTable('webhook_endpoints')
    .set({ status: 'disabled', disabled_reason: 'the endpoint answered 410 Gone' })
    .where('id', '=', endpoint)
    .execute()
  // A fresh repository: PostgreSQL's reads answer for a window, and this one has read nothing yet.
  expect(await createClaimsRepository(t.deps.database).targetIfOwn(asked, owner)).toBeUndefined()
})

it('re-enabling an endpoint disabled with a backlog ends every attempt from before', async (context) => {
  const { t, account, endpoint, countOf } = await endpointWithBacklog(context)
  const id = endpointIdOf(endpoint)
  await t.deps.webhookEndpoints.patch(account, id, { status: 'disabled' })
  expect(await countOf('pending')).toBe(BACKLOG - ENDING_BATCH)
  const enabled = await t.deps.webhookEndpoints.patch(account, id, { status: 'enabled' })
  expect(enabled.status).toBe('enabled')
  expect(await countOf('pending')).toBe(0)
  expect(await countOf('failed', 'the endpoint was disabled')).toBe(BACKLOG)
})

it('a sweep that read an endpoint ended before it was re-enabled ends nothing written for it since', async (context) => {
  const { t, db, account, endpoint, countOf } = await endpointWithBacklog(context)
  const id = endpointIdOf(endpoint)
  await t.deps.webhookEndpoints.patch(account, id, { status: 'disabled' })
  // Between the sweep's read and its transaction: the endpoint re-enabled, and an attempt written for it.
  let raced = false
  const racing = (handle: DbHandle): DbHandle =>
    Object.assign(Object.create(handle), {
      async write(work: Parameters<DbHandle['write']>[0]) {
        if (!raced) {
          raced = true
          await t.deps.webhookEndpoints.patch(account, id, { status: 'enabled' })
          await pendingFor(db, endpoint, 1, t.clock.now())
        }
        return handle.write(work)
      },
    })
  expect(await createSweep(racing(t.deps.database), t.clock)()).toBe('none')
  expect(await countOf('pending')).toBe(1)
})

it('the dispatcher’s own disable (a 410) ends none of the backlog in its step: the sweep ends it all', async (context) => {
  const { t, db, endpoint, countOf } = await endpointWithBacklog(context)
  const owner = ownerIdOf(randomUUID())
  const now = t.clock.now()
  const ended = await endedAttempts(db, owner, [{ endpointId: endpoint, outcome: answered(410, now) }], now)
  const step = settlingStepOf(t.deps.database, owner, t.clock)
  step.lanes.giveBackEnded(ended)
  await step.step(false)
  // Disabled with its reason; its step's transaction ended no more than the one attempt that got the 410.
  expect(await countOf('pending')).toBe(BACKLOG)
  const sweep = createSweep(t.deps.database, t.clock)
  while ((await sweep()) === 'more') {}
  expect(await countOf('pending')).toBe(0)
  expect(await countOf('failed', 'the endpoint answered 410 Gone')).toBe(BACKLOG)
})
