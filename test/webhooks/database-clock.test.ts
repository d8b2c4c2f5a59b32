import { randomUUID } from 'node:crypto'
import { expect, it } from 'vitest'
import { databaseNow } from '../../src/db/database-clock.js'
import { ownerIdOf } from '../../src/webhooks/owner.js'
import { build, onServices } from '../helpers.js'
import { endpointsWithDueAttempts } from './harness.js'
import { stepOf } from './step-harness.js'

/**
 * Lease and due times are the database's (PostgreSQL: its clock, whatever each host's says), and so are
 * the step's cheap reads that decide whether its transaction is worth running: a host whose clock is
 * behind the database's does not wait that far behind to lease what is due. (SQLite runs on this host:
 * its clock is the host's.)
 */
it.runIf(onServices)(
  "leases an endpoint whose attempt is due by the database's clock at the first step, on a host whose clock is 3 s behind it",
  async (context) => {
    const t = await build(context)
    const handle = t.deps.database
    const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
    const dueNow = await databaseNow(handle, handle.db, t.clock)
    await endpointsWithDueAttempts(handle.db, account, 1, dueNow)
    const behind = { now: () => Date.now() - 3_000, monotonic: () => performance.now() }
    await stepOf(handle, ownerIdOf(randomUUID()), [], behind).step(true)
    const row = await handle.db
      .selectFrom('webhook_endpoints')
      .select('lease_owner')
      .executeTakeFirstOrThrow()
    expect(row.lease_owner).not.toBeNull()
  },
)
