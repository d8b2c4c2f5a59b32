import type { Db } from '../db/database.js'
import type { DbHandle, PreparedWrite } from '../db/handle.js'
import { type ClaimedAttempt, createAttemptsRepository, PENDING } from './attempts.repository.js'
import { createOwnershipRead } from './ownership.repository.js'

/** Endpoints per statement of a take on PostgreSQL (one limited sub-select each, one round trip). */
export const TAKE_CHUNK_ENDPOINTS = 100

export type ClaimsRepository = ReturnType<typeof createClaimsRepository>

/**
 * A dispatcher's hold on attempts (`lease_token` = its owner id), the other half of the
 * `webhook_attempts` table's repository (attempts.repository.ts writes the rows, their outcomes and the
 * delivery log): taking an endpoint's due attempts into its queue, reading before each whether it is
 * still its own and where to send it (ownership.repository.ts), and giving back those it will not make.
 */
export function createClaimsRepository(handle: DbHandle) {
  const attempts = createAttemptsRepository(handle)
  const due = handle.dialect === 'sqlite' ? dueEach(handle.prepareWrite(dueOf)) : dueInChunks
  /**
   * In a step's transaction, for endpoints whose lease `owner` holds: up to `count` due attempts of each,
   * oldest first, that `owner` does not hold yet (a dead owner's are taken over), now held by `owner`.
   */
  async function take(
    trx: Db,
    options: { owner: string; wants: readonly Want[]; now: number },
  ): Promise<ClaimedAttempt[]> {
    const { owner, now, wants } = options
    const ids = wants.length === 0 ? [] : await due(trx, wants, owner, now)
    if (ids.length === 0) return []
    const claimed = (await hold(trx, ids, owner)).map(toClaimed)
    // An attempt whose event was purged (30 days) cannot be made: it ends here instead of coming back.
    const found = new Set(claimed.map((attempt) => attempt.id))
    const gone = ids.filter((id) => !found.has(id))
    await attempts.fail(trx, gone, 'the event is older than 30 days', now)
    return claimed
  }

  /** Marks these pending attempts `owner`'s and reads them with their event, oldest due first. */
  async function hold(trx: Db, ids: readonly number[], owner: string): Promise<ClaimedRow[]> {
    await trx
      .updateTable('webhook_attempts')
      .set({ lease_token: owner })
      .where('id', 'in', [...ids])
      .where('status', '=', PENDING)
      .execute()
    return claimedRows(trx)
      .where('a.id', 'in', [...ids])
      .orderBy('a.due_at')
      .orderBy('a.id')
      .execute()
  }

  return {
    take,
    /**
     * Asked just before the attempt starts: its endpoint's target now, while the attempt is still pending
     * and `owner`'s, its endpoint enabled and live; else undefined. On SQLite read in place, synchronously;
     * on PostgreSQL by a read of it and the attempts `queued` behind it, which answers for those for
     * OWNERSHIP_WINDOW_MS (ownership-windows.ts).
     */
    targetIfOwn: createOwnershipRead(handle),
    /**
     * Which of these endpoints have a due attempt that `owner` does not hold yet, in id order (a read
     * before a step, one statement: each endpoint's scan stops at its first such attempt).
     */
    async takeableAmong(endpointIds: readonly number[], owner: string, now: number): Promise<number[]> {
      if (endpointIds.length === 0) return []
      const rows = await handle.db
        .selectFrom('webhook_endpoints as e')
        .select('e.id')
        .where('e.id', 'in', [...endpointIds])
        .where(({ exists, selectFrom }) =>
          exists(
            selectFrom('webhook_attempts as a')
              .select('a.id')
              .whereRef('a.endpoint_id', '=', 'e.id')
              .where('a.status', '=', PENDING)
              .where('a.due_at', '<=', now)
              .where((eb) => eb.or([eb('a.lease_token', 'is', null), eb('a.lease_token', '<>', owner)])),
          ),
        )
        .orderBy('e.id')
        .execute()
      return rows.map((row) => row.id)
    },
    /**
     * Gives back every pending attempt of these endpoints that `owner` still holds: endpoints let go, whose
     * lanes had nothing queued nor in flight, so any such attempt is one whose taking this instance never
     * learnt of (a step whose commit reached the database but whose answer did not). Without this, `owner`
     * would never take it again (a take skips its own).
     */
    releaseAllOf: (trx: Db, endpointIds: readonly number[], owner: string) =>
      giveBack(trx, 'endpoint_id', endpointIds, owner),
    /** Gives attempts back unmade (SIGTERM, a lane let go): pending as they were, for any dispatcher. */
    release: (trx: Db, ids: readonly number[], owner: string) => giveBack(trx, 'id', ids, owner),
  }
}

/** Makes the pending attempts `owner` holds among these (by attempt or by endpoint id) pending for any dispatcher. */
async function giveBack(
  trx: Db,
  by: 'id' | 'endpoint_id',
  ids: readonly number[],
  owner: string,
): Promise<void> {
  if (ids.length === 0) return
  await trx
    .updateTable('webhook_attempts')
    .set({ lease_token: null })
    .where(by, 'in', [...ids])
    .where('lease_token', '=', owner)
    .where('status', '=', PENDING)
    .execute()
}

/** What a lane wants: up to `count` more of the endpoint's due attempts. */
type Want = { endpointId: number; count: number }

/**
 * Up to `count` due attempts of one endpoint, oldest first, that `owner` does not hold yet (a dead owner's
 * are taken over).
 */
function dueOf(db: Db, endpointId: number, now: number, owner: string, count: number) {
  return db
    .selectFrom('webhook_attempts')
    .select('id')
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', PENDING)
    .where('due_at', '<=', now)
    .where((eb) => eb.or([eb('lease_token', 'is', null), eb('lease_token', '<>', owner)]))
    .orderBy('due_at')
    .orderBy('id')
    .limit(count)
}

/** The ids of the attempts `dueOf` finds for each endpoint, in the order of `wants`. */
type Due = (trx: Db, wants: readonly Want[], owner: string, now: number) => Promise<number[]>

/** SQLite: `dueOf` compiled once and run for each endpoint (no statement of many parts built each step). */
function dueEach(statement: PreparedWrite<[number, number, string, number], { id: number }>): Due {
  return async (trx, wants, owner, now) => {
    const found = await statement(
      trx,
      wants.map(({ endpointId, count }) => [endpointId, now, owner, count]),
    )
    return found.flatMap((rows) => rows.map((row) => row.id))
  }
}

/** PostgreSQL: `dueOf` for up to TAKE_CHUNK_ENDPOINTS endpoints in one statement (UNION ALL). */
const dueInChunks: Due = async (trx, wants, owner, now) => {
  const ids: number[] = []
  for (let start = 0; start < wants.length; start += TAKE_CHUNK_ENDPOINTS) {
    const parts = wants
      .slice(start, start + TAKE_CHUNK_ENDPOINTS)
      .map(({ endpointId, count }) =>
        trx.selectFrom(dueOf(trx, endpointId, now, owner, count).as('due')).select('due.id'),
      )
    const [first, ...rest] = parts
    if (!first) continue
    const rows = await rest.reduce((query, part) => query.unionAll(part), first).execute()
    ids.push(...rows.map((row) => row.id))
  }
  return ids
}

/** Attempts with their event (one row each). */
function claimedRows(db: Db) {
  return db
    .selectFrom('webhook_attempts as a')
    .innerJoin('events as v', 'v.seq', 'a.event_seq')
    .select([
      'a.id',
      'a.attempt',
      'a.redelivery',
      'a.endpoint_id',
      'v.seq',
      'v.type',
      'v.created_at',
      'v.resource_version',
      'v.object',
      'v.trace_parent',
    ])
}
type ClaimedRow = Awaited<ReturnType<ReturnType<typeof claimedRows>['execute']>>[number]

function toClaimed(row: ClaimedRow): ClaimedAttempt {
  return {
    id: row.id,
    attempt: row.attempt,
    redelivery: row.redelivery === 1,
    endpoint: { id: row.endpoint_id },
    event: {
      seq: row.seq,
      type: row.type,
      created_at: row.created_at,
      resource_version: row.resource_version,
      object: row.object,
      trace_parent: row.trace_parent,
    },
  }
}
