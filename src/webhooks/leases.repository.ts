import type { ExpressionBuilder } from 'kysely'
import type { Database, Db, WebhookEndpointsTable } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { PENDING } from './attempts.repository.js'
import { ENABLED } from './endpoints.repository.js'
import { isDeadOwner } from './owner.js'

/** The endpoint a dispatcher leased, with what its lane starts from. */
export interface LeasedEndpoint {
  id: number
  accountId: number
  failuresInRow: number
}

export type LeasesRepository = ReturnType<typeof createLeasesRepository>

const leasedOf = (row: { id: number; api_key_id: number; failures_in_row: number }): LeasedEndpoint => ({
  id: row.id,
  accountId: row.api_key_id,
  failuresInRow: row.failures_in_row,
})

/**
 * Endpoint leases: one dispatcher at a time sends to an endpoint, so it alone keeps the endpoint's cap
 * of requests in flight (no claim between two requests, no lock between instances). A lease is held while
 * its owner renews it (`lease_until`, database time); a lapsed one, or on SQLite a dead process's, is
 * free to take.
 */
/** For a query on `webhook_endpoints as e`: the endpoint has an attempt due at `now`. */
const hasDueAttempt =
  (now: number) =>
  ({ exists, selectFrom }: ExpressionBuilder<Database & { e: WebhookEndpointsTable }, 'e'>) =>
    exists(
      selectFrom('webhook_attempts as a')
        .select('a.id')
        .whereRef('a.endpoint_id', '=', 'e.id')
        .where('a.status', '=', PENDING)
        .where('a.due_at', '<=', now),
    )

export function createLeasesRepository(handle: DbHandle) {
  /** Endpoints with an attempt due since `since` and no lease since before it (up to `limit`). */
  const unleased = handle.prepareRead((db, since: number, limit: number) =>
    db
      .selectFrom('webhook_endpoints as e')
      .select('e.id')
      .where('e.status', '=', ENABLED)
      .where('e.deleted_at', 'is', null)
      .where((eb) => eb.or([eb('e.lease_until', 'is', null), eb('e.lease_until', '<', since)]))
      .where(hasDueAttempt(since))
      .limit(limit),
  )
  const heldByOthers = handle.prepareRead((db, now: number) =>
    db
      .selectFrom('webhook_endpoints')
      .select('lease_owner')
      .distinct()
      .where('lease_owner', 'is not', null)
      .where('lease_until', '>=', now),
  )

  /** The owners of live leases whose process is gone (SQLite only: one host). */
  async function deadOwners(now: number): Promise<string[]> {
    if (handle.dialect !== 'sqlite') return []
    const rows = await heldByOthers(now)
    return rows.map((row) => row.lease_owner as string).filter((owner) => isDeadOwner(owner))
  }

  return {
    /** Whether an endpoint with a due attempt has no live lease (a cheap read before a write). */
    async anyClaimable(now: number): Promise<boolean> {
      return (await unleased(now, 1)).length > 0 || (await deadOwners(now)).length > 0
    },
    /**
     * How many endpoints have had an attempt due and no lease since before `since`, up to `limit`: those
     * that wait, not those just let go (which would count as waiting for the room they left) nor those
     * whose first attempt just came due.
     */
    async waitingSince(since: number, limit: number): Promise<number> {
      return (await unleased(since, limit)).length
    },
    /**
     * Leases up to `limit` enabled endpoints that have a due attempt and no live lease, the longest
     * unleased first (so that every endpoint gets its turn), to `owner` until `now + leaseMs`.
     */
    async acquire(
      trx: Db,
      options: { owner: string; now: number; leaseMs: number; limit: number },
    ): Promise<LeasedEndpoint[]> {
      const { now } = options
      const dead = await deadOwners(now)
      let chosen = trx
        .selectFrom('webhook_endpoints as e')
        .select('e.id')
        .where('e.status', '=', ENABLED)
        .where('e.deleted_at', 'is', null)
        .where((eb) =>
          eb.or([
            eb('e.lease_until', 'is', null),
            eb('e.lease_until', '<', now),
            ...(dead.length > 0 ? [eb('e.lease_owner', 'in', dead)] : []),
          ]),
        )
        .where(hasDueAttempt(now))
        .orderBy((eb) => eb.fn.coalesce('e.lease_until', eb.lit(0)))
        .orderBy('e.id')
        .limit(options.limit)
      // PostgreSQL: rows another transaction holds are skipped, never waited for (the step already holds
      // others, in id order; waiting here, out of that order, could close a circle with a redelivery).
      if (handle.dialect === 'postgres') chosen = chosen.forUpdate().skipLocked()
      const candidates = await chosen.execute()
      if (candidates.length === 0) return []
      // The condition again, in the update: of two instances that chose the same endpoint, one gets it.
      const rows = await trx
        .updateTable('webhook_endpoints')
        .set({ lease_owner: options.owner, lease_until: now + options.leaseMs })
        .where(
          'id',
          'in',
          candidates.map((row) => row.id),
        )
        .where((eb) =>
          eb.or([
            eb('lease_until', 'is', null),
            eb('lease_until', '<', now),
            ...(dead.length > 0 ? [eb('lease_owner', 'in', dead)] : []),
          ]),
        )
        .returning(['id', 'api_key_id', 'failures_in_row'])
        .execute()
      return rows.map(leasedOf)
    },
    /**
     * Extends every lease `owner` holds; the endpoints it still holds (a lease taken over is gone), with
     * what a lane starts from (a lease whose lane this instance does not know of comes back to it).
     */
    async renew(trx: Db, owner: string, now: number, leaseMs: number): Promise<LeasedEndpoint[]> {
      const rows = await trx
        .updateTable('webhook_endpoints')
        .set({ lease_until: now + leaseMs })
        .where('lease_owner', '=', owner)
        .returning(['id', 'api_key_id', 'failures_in_row'])
        .execute()
      return rows.map(leasedOf)
    },
    /**
     * Locks endpoint rows in id order (PostgreSQL) before a step touches their attempts, as a disabling
     * PATCH or a DELETE does (row, then attempts): the two never wait on each other in a circle.
     */
    async lockRows(trx: Db, ids: readonly number[]): Promise<void> {
      if (handle.dialect !== 'postgres' || ids.length === 0) return
      await trx
        .selectFrom('webhook_endpoints')
        .select('id')
        .where('id', 'in', [...ids])
        .orderBy('id')
        .forUpdate()
        .execute()
    },
    /**
     * Lets endpoints go: free for any dispatcher at once, their lease lapsed a moment before `now`. The
     * time stays: `acquire` takes the longest unleased first, so one let go waits behind those that waited
     * longer (with no time it tied with the never leased, and the lowest id won every time).
     */
    async release(trx: Db, owner: string, ids: readonly number[], now: number): Promise<void> {
      if (ids.length === 0) return
      await trx
        .updateTable('webhook_endpoints')
        .set({ lease_owner: null, lease_until: now - 1 })
        .where('id', 'in', [...ids])
        .where('lease_owner', '=', owner)
        .execute()
    },
  }
}
