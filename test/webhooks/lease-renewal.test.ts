import { expect, it } from 'vitest'
import { LEASE_MS, RENEW_MS } from '../../src/webhooks/step.js'
import { build, onServices } from '../helpers.js'
import { endpointRow, insertEndpointRows } from './harness.js'
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
