import { lockTransaction } from '../db/advisory-lock.js'
import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'

/** Requests in flight to one endpoint at most, across every instance (CONTRACT §14). */
export const MAX_IN_FLIGHT_PER_ENDPOINT = 4
/**
 * Dispatcher steps on PostgreSQL serialise on this lock (taken first in each step's transaction), so the
 * per-endpoint cap holds across instances, and a step that ends an endpoint's attempts never waits for a
 * row another step is leasing while that one waits for the lock.
 */
const CLAIM_LOCK = 0x7768_6b73 // "whks"
/** Due attempts looked at per claim. */
const CANDIDATES = 200

/** Rows per INSERT of attempts: 7 parameters each. */
const INSERT_CHUNK_ROWS = 1_000

/** An attempt to make, pending from `dueAt`: a fan-out's first, a retry, a redelivery's first. */
export interface NextAttempt {
  eventSeq: number
  endpointId: number
  attempt: number
  dueAt: number
  redelivery: boolean
}

/** One attempt a dispatcher holds, with what it needs to make it. */
export interface ClaimedAttempt {
  id: number
  attempt: number
  redelivery: boolean
  endpoint: { id: number; url: string; secrets: string[] }
  event: { seq: number; type: string; created_at: number; resource_version: number; object: string }
}

/** What came of one attempt. */
export interface AttemptResult {
  id: number
  leaseToken: string
  startedAt: number
  httpStatus: number | null
  error: string | null
  durationMs: number
}

export type AttemptsRepository = ReturnType<typeof createAttemptsRepository>

/** The deliveries' queue: claiming due attempts under a lease, writing what came of them, releasing them. */
export function createAttemptsRepository(handle: DbHandle) {
  const due = handle.prepareRead((db, now: number) =>
    db
      .selectFrom('webhook_attempts')
      .select('id')
      .where('status', '=', 'pending')
      .where('due_at', '<=', now)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .limit(1),
  )

  /**
   * In a step's transaction, after `lockQueue`: takes up to `slots` due attempts whose lease is free, leaving fewer than the cap in flight per
   * endpoint and never two of one (event, endpoint) at once, and leases them until `leaseUntil`.
   */
  async function claim(
    trx: Db,
    options: { now: number; slots: number; leaseToken: string; leaseUntil: number },
  ): Promise<ClaimedAttempt[]> {
    const { now } = options
    const busy = await trx
      .selectFrom('webhook_attempts')
      .select(['endpoint_id', 'event_seq'])
      .where('status', '=', 'pending')
      .where('lease_until', '>=', now)
      .execute()
    // Endpoints at their cap are left out here, not after: their backlog must not fill the window.
    const full = atCap(busy)
    let query = trx
      .selectFrom('webhook_attempts as a')
      .innerJoin('webhook_endpoints as e', 'e.id', 'a.endpoint_id')
      .select(['a.id', 'a.event_seq', 'a.endpoint_id'])
      .where('a.status', '=', 'pending')
      .where('a.due_at', '<=', now)
      .where((eb) => eb.or([eb('a.lease_until', 'is', null), eb('a.lease_until', '<', now)]))
      .where('e.status', '=', 'enabled')
      .where('e.deleted_at', 'is', null)
    if (full.length > 0) query = query.where('a.endpoint_id', 'not in', full)
    const candidates = await query.orderBy('a.due_at').orderBy('a.id').limit(CANDIDATES).execute()
    if (candidates.length === 0) return []
    const chosen = choose(candidates, busy, options.slots)
    if (chosen.length === 0) return []
    // Still pending and unleased when the lease is written (an endpoint's owner may have ended them).
    const leased = (
      await trx
        .updateTable('webhook_attempts')
        .set({ lease_token: options.leaseToken, lease_until: options.leaseUntil })
        .where('id', 'in', chosen)
        .where('status', '=', 'pending')
        .returning('id')
        .execute()
    ).map((row) => row.id)
    if (leased.length === 0) return []
    const claimed = await loadClaimed(trx, leased, now)
    // An attempt whose event was purged (30 days) cannot be made: it ends here instead of coming back.
    const gone = leased.filter((id) => !claimed.some((attempt) => attempt.id === id))
    if (gone.length > 0) {
      await trx
        .updateTable('webhook_attempts')
        .set({
          status: 'failed',
          error: 'the event is older than 30 days',
          lease_token: null,
          lease_until: null,
        })
        .where('id', 'in', gone)
        .execute()
    }
    return claimed
  }

  const dueBeyond = handle.prepareRead((db, now: number, skip: number) =>
    db
      .selectFrom('webhook_attempts')
      .select('id')
      .where('status', '=', 'pending')
      .where('due_at', '<=', now)
      .offset(skip)
      .limit(1),
  )

  return {
    claim,
    /** Taken first by every dispatcher step (see CLAIM_LOCK); SQLite has one writer anyway. */
    lockQueue: (trx: Db) => lockTransaction(handle, trx, CLAIM_LOCK),
    /**
     * Whether more than `count` attempts are due (reads at most `count` + 1 index entries). Retries due
     * later do not count: an endpoint that keeps failing must not hold back everyone's new events.
     */
    async dueMoreThan(now: number, count: number): Promise<boolean> {
      return (await dueBeyond(now, count)).length > 0
    },
    /** Whether any attempt is due and free (a cheap read before a write transaction). */
    async anyDue(now: number): Promise<boolean> {
      return (await due(now)).length > 0
    },
    /**
     * Writes the result of an attempt still held under `leaseToken`: false when the lease was lost (it
     * expired and another dispatcher took the attempt), and then nothing is written.
     */
    async record(trx: Db, result: AttemptResult): Promise<boolean> {
      const updated = await trx
        .updateTable('webhook_attempts')
        .set({
          status: result.error === null ? 'succeeded' : 'failed',
          at: result.startedAt,
          http_status: result.httpStatus,
          error: result.error,
          duration_ms: result.durationMs,
          lease_token: null,
          lease_until: null,
        })
        .where('id', '=', result.id)
        .where('lease_token', '=', result.leaseToken)
        .where('status', '=', 'pending')
        .executeTakeFirst()
      return updated.numUpdatedRows > 0n
    },
    /** Attempts to make, pending from their `dueAt` (several statements of 1,000 rows at most). */
    async schedule(trx: Db, attempts: readonly NextAttempt[]): Promise<void> {
      const rows = attempts.map((next) => ({
        event_seq: next.eventSeq,
        endpoint_id: next.endpointId,
        attempt: next.attempt,
        status: 'pending',
        due_at: next.dueAt,
        at: next.dueAt,
        redelivery: next.redelivery ? 1 : 0,
      }))
      for (let start = 0; start < rows.length; start += INSERT_CHUNK_ROWS) {
        await trx
          .insertInto('webhook_attempts')
          .values(rows.slice(start, start + INSERT_CHUNK_ROWS))
          .execute()
      }
    },
    /** Gives attempts back unmade (SIGTERM): pending as they were, for any dispatcher to take. */
    async release(trx: Db, ids: readonly number[], leaseToken: string): Promise<void> {
      if (ids.length === 0) return
      await trx
        .updateTable('webhook_attempts')
        .set({ lease_token: null, lease_until: null })
        .where('id', 'in', [...ids])
        .where('lease_token', '=', leaseToken)
        .execute()
    },
    /** Ends every pending attempt to an endpoint that no longer takes deliveries (in flight ones finish). */
    async failPending(trx: Db, endpointId: number, reason: string, now: number): Promise<void> {
      await trx
        .updateTable('webhook_attempts')
        .set({ status: 'failed', error: reason, at: now })
        .where('endpoint_id', '=', endpointId)
        .where('status', '=', 'pending')
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
        .execute()
    },
    /** Deletes attempts made before `before`, at most `batch` rows; how many it deleted. */
    async purge(trx: Db, before: number, batch: number): Promise<number> {
      // Oldest first along the primary key (ids grow with time): no index on `at` to keep up.
      const old = trx
        .selectFrom('webhook_attempts')
        .select('id')
        .where('at', '<', before)
        .where('status', '<>', 'pending')
        .orderBy('id')
        .limit(batch)
      const result = await trx.deleteFrom('webhook_attempts').where('id', 'in', old).executeTakeFirst()
      return Number(result.numDeletedRows)
    },
  }
}

type Candidate = { id: number; event_seq: number; endpoint_id: number }

/** The endpoints with the cap's number of live leases. */
function atCap(busy: Omit<Candidate, 'id'>[]): number[] {
  const counts = new Map<number, number>()
  for (const { endpoint_id } of busy) counts.set(endpoint_id, (counts.get(endpoint_id) ?? 0) + 1)
  return [...counts].filter(([, count]) => count >= MAX_IN_FLIGHT_PER_ENDPOINT).map(([id]) => id)
}

/** The candidates that fit: under the per-endpoint cap, one per (event, endpoint), `slots` at most. */
function choose(candidates: Candidate[], busy: Omit<Candidate, 'id'>[], slots: number): number[] {
  const perEndpoint = new Map<number, number>()
  const pairs = new Set<string>()
  for (const item of busy) {
    perEndpoint.set(item.endpoint_id, (perEndpoint.get(item.endpoint_id) ?? 0) + 1)
    pairs.add(`${item.event_seq}:${item.endpoint_id}`)
  }
  const chosen: number[] = []
  for (const candidate of candidates) {
    if (chosen.length >= slots) break
    const pair = `${candidate.event_seq}:${candidate.endpoint_id}`
    const inFlight = perEndpoint.get(candidate.endpoint_id) ?? 0
    if (inFlight >= MAX_IN_FLIGHT_PER_ENDPOINT || pairs.has(pair)) continue
    perEndpoint.set(candidate.endpoint_id, inFlight + 1)
    pairs.add(pair)
    chosen.push(candidate.id)
  }
  return chosen
}

/** The chosen attempts with their event and their endpoint's URL and signing secrets. */
async function loadClaimed(trx: Db, ids: number[], now: number): Promise<ClaimedAttempt[]> {
  const rows = await trx
    .selectFrom('webhook_attempts as a')
    .innerJoin('events as v', 'v.seq', 'a.event_seq')
    .innerJoin('webhook_endpoints as e', 'e.id', 'a.endpoint_id')
    .select([
      'a.id',
      'a.attempt',
      'a.redelivery',
      'e.id as endpoint_id',
      'e.url',
      'e.secret',
      'e.previous_secret',
      'e.previous_secret_until',
      'v.seq',
      'v.type',
      'v.created_at',
      'v.resource_version',
      'v.object',
    ])
    .where('a.id', 'in', ids)
    .execute()
  return rows.map((row) => ({
    id: row.id,
    attempt: row.attempt,
    redelivery: row.redelivery === 1,
    endpoint: {
      id: row.endpoint_id,
      url: row.url,
      secrets:
        row.previous_secret && (row.previous_secret_until ?? 0) > now
          ? [row.secret, row.previous_secret]
          : [row.secret],
    },
    event: {
      seq: row.seq,
      type: row.type,
      created_at: row.created_at,
      resource_version: row.resource_version,
      object: row.object,
    },
  }))
}
