import { sql } from 'kysely'
import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { PENDING } from './attempts.repository.js'
import { ENABLED } from './endpoints.repository.js'
import { type OwnedAsk, ownedInWindows } from './ownership-windows.js'
import { parseRetiredSecrets, type RetiredSecret } from './signature.js'

/**
 * Where and how an attempt is sent: its endpoint's URL and secrets as the read just before it starts
 * found them. Never those of when it was taken: a slow partner's lane holds attempts for minutes, and a
 * PATCH of the URL or a rotation must reach them.
 */
export interface EndpointTarget {
  url: string
  secret: string
  /** The secrets rotations replaced: those still in their grace when the attempt starts sign too. */
  retired: readonly RetiredSecret[]
}

/** The pre-send read: the attempt's target while it is still `owner`'s to make, else undefined. */
export type TargetIfOwn = (
  asked: OwnedAsk,
  owner: string,
  queued?: readonly OwnedAsk[],
) => EndpointTarget | undefined | Promise<EndpointTarget | undefined>

/**
 * The read a dispatcher makes just before an attempt starts (claims.repository.ts exposes it): whether the
 * attempt is still its own, and where and how to send it. On SQLite read in place, on PostgreSQL through
 * read windows (ownership-windows.ts).
 */
export function createOwnershipRead(handle: DbHandle): TargetIfOwn {
  return handle.dialect === 'postgres' ? ownedInWindows(targetsAmong(handle)) : createTargetInPlace(handle)
}

/** SQLite's ownership read: one compiled read, run in place (a call, not a round trip). */
function createTargetInPlace(handle: DbHandle): TargetIfOwn {
  const read = handle.prepareRead((db, id: number, owner: string) =>
    ownPending(db, owner).select(['e.url', 'e.secret', 'e.retired_secrets']).where('a.id', '=', id),
  )
  return (asked, owner) => {
    const rows = read(asked.id, owner)
    const targetIn = (found: TargetRow[]) => (found[0] ? targetOf(found[0]) : undefined)
    return Array.isArray(rows) ? targetIn(rows) : rows.then(targetIn)
  }
}

/**
 * `owner`'s pending attempts with their endpoint, enabled and live: an ending (DELETE, disable) ends a
 * bounded number of its pending attempts at once and the dispatchers the rest later (`failPending`), so
 * the endpoint's row is what says at once that none may start.
 */
function ownPending(db: Db, owner: string) {
  return db
    .selectFrom('webhook_attempts as a')
    .innerJoin('webhook_endpoints as e', 'e.id', 'a.endpoint_id')
    .where('a.lease_token', '=', owner)
    .where('a.status', '=', PENDING)
    .where('e.status', '=', ENABLED)
    .where('e.deleted_at', 'is', null)
}

/**
 * PostgreSQL's read behind `ownedInWindows`: which of these attempts are `ownPending`, each with its
 * endpoint's target. One row per endpoint: a read asks about a lane's next attempts (READ_AHEAD_ATTEMPTS
 * and one), mostly of one endpoint, whose URL (up to MAX_URL_LENGTH) and secrets would otherwise come back
 * once for each.
 */
function targetsAmong(handle: DbHandle) {
  const read = handle.prepareRead((db, ids: number[], owner: string) =>
    ownPending(db, owner)
      .select(['e.url', 'e.secret', 'e.retired_secrets', sql<string[]>`array_agg(a.id)`.as('ids')])
      .where('a.id', '=', sql<number>`any(${ids}::bigint[])`)
      .groupBy('e.id'),
  )
  return async (ids: number[], owner: string): Promise<Map<number, EndpointTarget>> => {
    const targets = new Map<number, EndpointTarget>()
    for (const row of await read(ids, owner)) {
      const target = targetOf(row)
      for (const id of row.ids) targets.set(Number(id), target)
    }
    return targets
  }
}

type TargetRow = { url: string; secret: string; retired_secrets: string }
const targetOf = (row: TargetRow): EndpointTarget => ({
  url: row.url,
  secret: row.secret,
  retired: parseRetiredSecrets(row.retired_secrets),
})
