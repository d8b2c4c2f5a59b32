import { randomUUID } from 'node:crypto'
import { expect, it, type TestContext } from 'vitest'
import { databaseNow } from '../../src/db/database-clock.js'
import { ownerIdOf } from '../../src/webhooks/owner.js'
import { LEASE_MS, RENEW_MS } from '../../src/webhooks/step.js'
import { build, onServices } from '../helpers.js'
import { endpointRow, endpointsWithDueAttempts, insertEndpointRows } from './harness.js'
import { stepOf } from './step-harness.js'

/**
 * While a dispatcher believes its leases surely its own (it starts attempts and keeps its requests in flight),
 * each of them lasts at least RENEW_MS more on the database's clock: the margin in which it hangs up before
 * another instance may take the endpoint over. Leasing a new endpoint renews nothing else, so it must not
 * count as a renewal: an endpoint leased every 900 ms once kept the first lease from being renewed at all,
 * and it lapsed while its owner went on sending.
 */
// SQLite: on PostgreSQL leases are on the database server's clock, which a test cannot move (the step's
// bookkeeping that this checks is the same on either store).
it.skipIf(onServices)(
  'a step that leases another endpoint does not stand in for renewing those held',
  async (context) => {
    const t = await build(context)
    const handle = t.deps.database
    const { db } = handle
    const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
    const owner = 'host/1/renewal'
    const step = stepOf(handle, owner, [], t.clock)
    const event = () => ({ type: 'pet.created', api_key_id: null, resource_version: 1, object: '{}' })

    for (let n = 0; n < 8; n++) {
      const now = t.clock.now()
      await insertEndpointRows(db, [endpointRow(account, `https://e${n}.example/`, '["pet.*"]', now)])
      await db
        .insertInto('events')
        .values({ ...event(), created_at: now })
        .execute()
      // The first step fans the event out; the next leases the endpoint it gave an attempt.
      while ((await step.step(true)).busy) {}
      const leases = await db
        .selectFrom('webhook_endpoints')
        .select(['id', 'lease_until'])
        .where('lease_owner', '=', owner)
        .execute()
      expect(leases).toHaveLength(n + 1)
      expect(step.surelyHeld()).toBe(true)
      for (const lease of leases) expect(Number(lease.lease_until) - now).toBeGreaterThanOrEqual(RENEW_MS)
      t.clock.advance(900)
    }
    // Nothing renewed for LEASE_MS - RENEW_MS: no longer sure.
    t.clock.advance(LEASE_MS - RENEW_MS)
    expect(step.surelyHeld()).toBe(false)
  },
)

/**
 * A step that has just leased an endpoint (its attempt queued in a lane that never sends), on a FakeClock;
 * the lease's end as stored.
 */
async function holdingOneLease(context: TestContext) {
  const t = await build(context)
  const handle = t.deps.database
  const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
  await endpointsWithDueAttempts(handle.db, account, 1, await databaseNow(handle, handle.db, t.clock))
  const step = stepOf(handle, ownerIdOf(randomUUID()), [], t.clock)
  while ((await step.step(true)).busy) {}
  expect(step.surelyHeld()).toBe(true)
  const leaseUntil = async () =>
    Number(
      (await handle.db.selectFrom('webhook_endpoints').select('lease_until').executeTakeFirstOrThrow())
        .lease_until,
    )
  return { t, step, leaseUntil, databaseNow: () => databaseNow(handle, handle.db, t.clock) }
}

/**
 * Leases lapse by the database's clock, which passes as time does whatever this host's clock is set to
 * (NTP, a VM's resume). Timed by the host's clock, a step whose clock was set back a minute renewed
 * nothing for a minute and stayed sure of its leases meanwhile: on PostgreSQL another instance took its
 * endpoints over 5 s on and sent beside it.
 */
it('renews on time, and stops being sure of its leases on time, after the host clock is set back a minute', async (context) => {
  const { t, step, leaseUntil, databaseNow } = await holdingOneLease(context)
  t.clock.stepWall(-60_000)
  t.clock.advance(RENEW_MS)
  const before = await databaseNow()
  await step.step(true)
  const after = await databaseNow()
  expect(await leaseUntil()).toBeGreaterThanOrEqual(before + LEASE_MS)
  expect(await leaseUntil()).toBeLessThanOrEqual(after + LEASE_MS)
  t.clock.advance(LEASE_MS - RENEW_MS - 1)
  expect(step.surelyHeld()).toBe(true)
  t.clock.advance(1)
  expect(step.surelyHeld()).toBe(false)
})

/**
 * On SQLite the database's clock is this host's: set forward, it brings the leases' end nearer for every
 * process sharing the file, so the step is no longer sure of them and renews at once. On PostgreSQL the
 * server's clock did not move: the leases last as long as they did, and nothing is hung up on.
 */
it('is no longer sure of its leases after the host clock is set forward only where it is the database’s (SQLite)', async (context) => {
  const { t, step } = await holdingOneLease(context)
  t.clock.stepWall(LEASE_MS - RENEW_MS)
  expect(step.surelyHeld()).toBe(onServices)
  await step.step(true)
  expect(step.surelyHeld()).toBe(true)
})
