import { expect, it } from 'vitest'
import type { DbHandle } from '../../src/db/handle.js'
import { createCircuitsRepository } from '../../src/webhooks/circuits.repository.js'
import { createDisabler } from '../../src/webhooks/disable.js'
import { createEndingsRepository } from '../../src/webhooks/endings.repository.js'
import { createEndpointsRepository } from '../../src/webhooks/endpoints.repository.js'
import { endpointIdOf } from '../../src/webhooks/endpoints.service.js'
import { createLeasesRepository } from '../../src/webhooks/leases.repository.js'
import { createSweep, SWEEP_GRACE_MS } from '../../src/webhooks/sweep.js'
import { build } from '../helpers.js'
import { recordingHandle } from '../query-plans.js'
import { endpointsOf } from './ended-harness.js'
import { endpointRow, eventRow, insertEndpointRows } from './harness.js'

/** A plan line that reads the whole endpoints table (SQLite; PostgreSQL, its sequential scans priced out). */
const WHOLE_TABLE =
  /^SCAN (webhook_endpoints|e)$|Seq Scan on webhook_endpoints|Scan using webhook_endpoints_pkey on webhook_endpoints( e)?\n(?!\s*Index Cond)/m

/**
 * The statements a dispatcher runs over every endpoint, every step or every second, each with the index it
 * must read along: the enabled live endpoints, the leases held, or the ended endpoints marked for the sweep.
 */
function dispatcherReads(now: number) {
  const endpoints = (h: DbHandle) => createEndpointsRepository(h)
  const leases = (h: DbHandle) => createLeasesRepository(h)
  const owner = 'host/1/dispatcher'
  return [
    ['enabled', (h: DbHandle) => endpoints(h).enabledIds()],
    ['enabled', (h: DbHandle) => h.write((trx) => endpoints(h).anyEnabledIn(trx))],
    ['enabled', (h: DbHandle) => h.write((trx) => endpoints(h).takersIn(trx, 0, now))],
    ['enabled', (h: DbHandle) => createCircuitsRepository(h).countCircuitOpen()],
    ['enabled', (h: DbHandle) => leases(h).waitingSince(now, 10)],
    [
      'enabled',
      (h: DbHandle) => h.write((trx) => leases(h).acquire(trx, { owner, now, leaseMs: 1, limit: 10 })),
    ],
    ['lease_owner', (h: DbHandle) => h.write((trx) => leases(h).renew(trx, owner, now, 1))],
    ['sweep', (h: DbHandle) => createEndingsRepository(h).endedWithPending(100)],
    ['sweep', (h: DbHandle) => createEndingsRepository(h).sweptOut(now, 100)],
  ] as const
}

it("the dispatchers' reads over all endpoints go along indexes that leave the deleted ones out", async (context) => {
  const t = await build(context)
  const now = t.clock.now()
  const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
  const row = (i: number) => endpointRow(account, `https://hooks.example/${i}`, '["*"]', now)
  // Deleted for good, as a partner that creates and deletes endpoints leaves them, and one enabled.
  await insertEndpointRows(t.deps.database.db, [
    ...Array.from({ length: 200 }, (_, i) => ({ ...row(i), deleted_at: now })),
    row(200),
  ])
  for (const [index, read] of dispatcherReads(now)) {
    const recording = recordingHandle(t.deps.database)
    await read(recording.handle)
    const plans = (await recording.plans()).join('\n')
    expect(plans, String(read)).toContain(`webhook_endpoints_${index}`)
    expect(plans, String(read)).not.toMatch(WHOLE_TABLE)
  }
})

it('an ended endpoint stays marked for the sweep while anything of it may still be pending, and is let go after', async (context) => {
  const t = await build(context)
  const { db } = t.deps.database
  const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
  const ids = await endpointsOf(db, account, 3, t.clock.now())
  const [deleted, disabled, reenabled] = ids as [number, number, number]
  const marked = async () =>
    (
      await db
        .selectFrom('webhook_endpoints')
        .select('id')
        .where('sweep_until', 'is not', null)
        .orderBy('id')
        .execute()
    ).map((row) => row.id)
  await t.deps.webhookEndpoints.remove(account, endpointIdOf(deleted))
  // The dispatcher's own disable (a 410, five days of failures) waits for no fan-out in flight.
  await t.deps.database.write((trx) =>
    createDisabler(t.deps.database, { answered: false })(
      trx,
      disabled,
      'the endpoint answered 410 Gone',
      t.clock.now(),
    ),
  )
  await t.deps.webhookEndpoints.patch(account, endpointIdOf(reenabled), { status: 'disabled' })
  expect(await marked()).toEqual([deleted, disabled, reenabled])
  await t.deps.webhookEndpoints.patch(account, endpointIdOf(reenabled), { status: 'enabled' })
  expect(await marked()).toEqual([deleted, disabled])

  const sweep = createSweep(t.deps.database, t.clock)
  // Nothing pending, but a fan-out in flight may yet write an attempt: kept within the grace.
  t.clock.advance(1_000)
  expect(await sweep()).toBe('none')
  expect(await marked()).toEqual([deleted, disabled])
  // An attempt that such a fan-out wrote after the disable, within the grace: the sweep ends it.
  t.clock.advance(SWEEP_GRACE_MS - 2_000)
  const { seq } = await db
    .insertInto('events')
    .values({ ...eventRow(t.clock.now()), fanned_out: 1 })
    .returning('seq')
    .executeTakeFirstOrThrow()
  await db
    .insertInto('webhook_attempts')
    .values({ event_seq: seq, endpoint_id: disabled, attempt: 1, status: 'pending', due_at: 0, at: 0 })
    .execute()
  expect(await sweep()).toBe('some')
  expect(await marked()).toEqual([deleted, disabled])
  // Past the grace, with nothing pending: let go, and no read of the sweep reads them again.
  t.clock.advance(2_000)
  expect(await sweep()).toBe('none')
  expect(await marked()).toEqual([])
  const [attempt] = await db.selectFrom('webhook_attempts').select(['status', 'error']).execute()
  expect(attempt).toEqual({ status: 'failed', error: 'the endpoint answered 410 Gone' })
})
