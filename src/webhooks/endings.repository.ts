import type { ExpressionBuilder } from 'kysely'
import type { Database, Db, WebhookEndpointsTable } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { PENDING } from './attempts.repository.js'
import type { EndpointRow } from './endpoints.repository.js'

/** An endpoint deleted or disabled, with why. */
export type EndingRow = Pick<EndpointRow, 'id' | 'status' | 'deleted_at' | 'disabled_reason'>
/** An endpoint whose attempts are no longer sent, with why (`endedIn`). */
export type EndedEndpointRow = EndingRow & {
  revoked_at: number | null
  expires_at: number | null
}

type EndpointAsE = ExpressionBuilder<Database & { e: WebhookEndpointsTable }, 'e'>

/** Deleted or disabled (endpoint `e`). */
const ended = (eb: EndpointAsE) =>
  eb.or([eb('e.deleted_at', 'is not', null), eb('e.status', '<>', 'enabled')])

/** Endpoint `e`'s pending attempts. */
const pendingOf = (eb: EndpointAsE) =>
  eb
    .selectFrom('webhook_attempts as a')
    .select('a.id')
    .whereRef('a.endpoint_id', '=', 'e.id')
    .where('a.status', '=', PENDING)

/**
 * Marked for the sweep, and done with: past `sweep_until` with nothing pending. (A re-enable unmarks its
 * endpoint itself: it ends everything pending first.)
 */
const sweptOut = (now: number) => (eb: EndpointAsE) =>
  eb.and([
    eb('e.sweep_until', 'is not', null),
    eb('e.sweep_until', '<', now),
    eb.not(eb.exists(pendingOf(eb))),
  ])

/**
 * The SQL for endpoints that ended (deleted, disabled, their account's key revoked or expired): which of
 * them a step's attempts belong to, and those whose pending attempts the dispatchers still have to end
 * (sweep.ts) and let go of. The rest of `webhook_endpoints` is endpoints.repository.ts'.
 */
export function createEndingsRepository(handle: DbHandle) {
  return {
    /**
     * Up to `limit` endpoints deleted or disabled that still have pending attempts, ascending id (a
     * dispatcher ends those attempts: sweep.ts). Only those an ending marked (`sweep_until`): the deleted
     * ones stay in the table for good, and this read must not grow with them.
     */
    endedWithPending: (limit: number): Promise<EndingRow[]> =>
      handle.db
        .selectFrom('webhook_endpoints as e')
        .select(['e.id', 'e.status', 'e.deleted_at', 'e.disabled_reason'])
        .where('e.sweep_until', 'is not', null)
        .where(ended)
        .where((eb) => eb.exists(pendingOf(eb)))
        .orderBy('e.id')
        .limit(limit)
        .execute(),
    /**
     * Up to `limit` marked endpoints the sweep may let go of (sweep.ts): their `sweep_until` has passed
     * with none of their attempts pending.
     */
    sweptOut: async (now: number, limit: number): Promise<number[]> =>
      (
        await handle.db
          .selectFrom('webhook_endpoints as e')
          .select('e.id')
          .where(sweptOut(now))
          .limit(limit)
          .execute()
      ).map((row) => row.id),
    /** Unmarks those of endpoints `ids` still `sweptOut` at `now`, in `trx`. */
    async letGo(trx: Db, ids: readonly number[], now: number): Promise<void> {
      await trx
        .updateTable('webhook_endpoints as e')
        .set({ sweep_until: null })
        .where('e.id', 'in', [...ids])
        .where(sweptOut(now))
        .execute()
    },
    /**
     * Of endpoints `ids`, those still deleted or disabled, their rows locked to the end of `trx` in id
     * order (PostgreSQL; SQLite has one writer at a time), skipping rows another transaction holds: a
     * re-enable, or a step, which locks the rows it touches before their attempts (sweep.ts).
     */
    lockEndedIn(trx: Db, ids: readonly number[]): Promise<EndingRow[]> {
      const query = trx
        .selectFrom('webhook_endpoints as e')
        .select(['e.id', 'e.status', 'e.deleted_at', 'e.disabled_reason'])
        .where('e.id', 'in', [...ids])
        .where(ended)
        .orderBy('e.id')
      return (handle.dialect === 'postgres' ? query.forUpdate().skipLocked() : query).execute()
    },
    /**
     * Of endpoints `ids`, those deleted, disabled, or whose account's key was revoked or expired by `now`,
     * with what says which.
     */
    endedIn: (trx: Db, ids: readonly number[], now: number): Promise<EndedEndpointRow[]> =>
      trx
        .selectFrom('webhook_endpoints as e')
        .innerJoin('api_keys as k', 'k.id', 'e.api_key_id')
        .select(['e.id', 'e.status', 'e.deleted_at', 'e.disabled_reason', 'k.revoked_at', 'k.expires_at'])
        .where('e.id', 'in', [...ids])
        .where((eb) =>
          eb.or([
            eb('e.deleted_at', 'is not', null),
            eb('e.status', '<>', 'enabled'),
            eb('k.revoked_at', 'is not', null),
            eb('k.expires_at', '<=', now),
          ]),
        )
        .execute(),
  }
}
