import { sql } from 'kysely'
import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'

/** Requests in flight to one endpoint at most, across every instance (CONTRACT §14). */
export const MAX_IN_FLIGHT_PER_ENDPOINT = 4
/**
 * `'pending'` written into the SQL text, not bound. The partial indexes of `webhook_attempts` are chosen
 * by comparing a query's `status` term with their WHERE: against a bound value SQLite reads the value when
 * it plans, so each run prepares the statement again (12 µs a run for a lane's take, 3 without;
 * src/db/README.md). On PostgreSQL too, a named statement's generic plan can use such an index only with
 * the constant in its text.
 */
export const PENDING = sql.lit('pending')
/** Rows per INSERT of attempts: 7 parameters each. */
const INSERT_CHUNK_ROWS = 1_000
/** Pending attempts one transaction ends at most when their endpoint ends (`failPending`). */
export const ENDING_BATCH = 1_000

/** An attempt to make, pending from `dueAt`: a fan-out's first, a retry, a redelivery's first. */
export interface NextAttempt {
  eventSeq: number
  endpointId: number
  attempt: number
  dueAt: number
  redelivery: boolean
}

/**
 * One attempt a dispatcher holds, with its event. Where and how it is sent (the endpoint's URL and secrets)
 * is read just before it starts (`EndpointTarget`, ownership.repository.ts), not kept from its taking.
 */
export interface ClaimedAttempt {
  id: number
  attempt: number
  redelivery: boolean
  endpoint: { id: number }
  event: {
    seq: number
    type: string
    created_at: number
    resource_version: number
    object: string
    /** The emitting change's trace context: the attempt's span links to it. */
    trace_parent: string | null
  }
}

/** What came of one attempt (attempt.ts, its POST: send.ts), as it is written down. */
export interface AttemptOutcome {
  startedAt: number
  /** null when no HTTP answer came (a URL refused, a timeout, a refused connection, a TLS error, an abort). */
  httpStatus: number | null
  /** A short description of what went wrong, null on a 2xx: `timed out after 15000 ms`, `connection refused`, `HTTP 302 (redirects are not followed)`, `HTTP 500: <first bytes of the body>`... */
  error: string | null
  /** Retry-After of a 429/503, in ms (delta-seconds or an HTTP date), else undefined. */
  retryAfterMs?: number | undefined
  durationMs: number
}

export type AttemptsRepository = ReturnType<typeof createAttemptsRepository>

/**
 * The deliveries' queue. A dispatcher that holds an endpoint's lease (leases.repository.ts) takes that
 * endpoint's due attempts into its own queue (`lease_token` = its owner id: claims.repository.ts, the
 * other half of this table's repository), makes them, and writes what came of each only while the
 * attempt is still its own.
 */
export function createAttemptsRepository(handle: DbHandle) {
  const dueBeyond = handle.prepareRead((db, endpointId: number, now: number, count: number) =>
    db
      .selectFrom('webhook_attempts')
      .select('id')
      .where('endpoint_id', '=', endpointId)
      .where('status', '=', PENDING)
      .where('due_at', '<=', now)
      .offset(count)
      .limit(1),
  )
  const insertOne = handle.prepareWrite(
    (db, eventSeq: number, endpointId: number, attempt: number, dueAt: number, redelivery: number) =>
      db.insertInto('webhook_attempts').values({
        event_seq: eventSeq,
        endpoint_id: endpointId,
        attempt,
        status: 'pending',
        due_at: dueAt,
        at: dueAt,
        redelivery,
      }),
  )
  /** One run: an attempt inserted (its arguments, as the statement takes them). */
  type AttemptRun = Parameters<typeof insertOne>[1][number]
  const deliveriesOf = (db: Db, endpointId: number, beforeId: number) =>
    db
      .selectFrom('webhook_attempts')
      .select(['id', 'event_seq', 'attempt', 'at', 'status', 'http_status', 'error', 'duration_ms'])
      .where('endpoint_id', '=', endpointId)
      .where('id', '<', beforeId)
      .orderBy('id', 'desc')
  const deliveries = handle.prepareRead((db, endpointId: number, beforeId: number, limit: number) =>
    deliveriesOf(db, endpointId, beforeId).limit(limit),
  )
  const deliveriesWith = handle.prepareRead(
    (db, endpointId: number, beforeId: number, status: string, limit: number) =>
      deliveriesOf(db, endpointId, beforeId).where('status', '=', status).limit(limit),
  )
  const dueCount = handle.prepareRead((db, now: number, cap: number) =>
    db
      .selectFrom(
        db
          .selectFrom('webhook_attempts')
          .select('id')
          .where('status', '=', PENDING)
          .where('due_at', '<=', now)
          .limit(cap)
          .as('due'),
      )
      .select((eb) => eb.fn.countAll<number>().as('count')),
  )

  /** Ends pending attempts as failed with `error`, made at `now` (never sent). */
  async function fail(trx: Db, ids: readonly number[], error: string, now: number): Promise<void> {
    if (ids.length === 0) return
    await trx
      .updateTable('webhook_attempts')
      .set({ status: 'failed', error, lease_token: null, at: now })
      .where('id', 'in', [...ids])
      .where('status', '=', PENDING)
      .execute()
  }

  return {
    fail,
    /** Whether the endpoint has at least `count` attempts due (reads that many index entries at most). */
    async hasDue(endpointId: number, now: number, count: number): Promise<boolean> {
      return (await dueBeyond(endpointId, now, count - 1)).length > 0
    },
    /** The delivery log: an endpoint's attempts before `beforeId`, newest first, of `status` if given. */
    deliveryPage: (endpointId: number, beforeId: number, limit: number, status?: string) =>
      status === undefined
        ? deliveries(endpointId, beforeId, limit)
        : deliveriesWith(endpointId, beforeId, status, limit),
    /**
     * How many attempts are due now, every endpoint's, counted up to `cap` (a metric: a backlog of
     * millions must not make a scrape long; on SQLite it runs on the event loop).
     */
    async countDue(now: number, cap: number): Promise<number> {
      const [row] = await dueCount(now, cap)
      return Number(row?.count ?? 0)
    },
    /**
     * Attempts to make, pending from their `dueAt`: on SQLite one statement run per row, on PostgreSQL
     * statements of 1,000 rows at most.
     */
    async schedule(trx: Db, attempts: readonly NextAttempt[]): Promise<void> {
      if (handle.dialect === 'sqlite') {
        const runs = attempts.map((next): AttemptRun => {
          const { eventSeq, endpointId, attempt, dueAt } = next
          return [eventSeq, endpointId, attempt, dueAt, next.redelivery ? 1 : 0]
        })
        await insertOne(trx, runs)
        return
      }
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

    /**
     * Ends up to `limit` pending attempts of an endpoint that no longer takes deliveries, as failed with
     * `reason`; how many. An ending (DELETE, disable) ends ENDING_BATCH in its own transaction, and the
     * dispatchers the rest (`sweep.ts`), so that no transaction's work grows with a backlog (a hung
     * endpoint's may hold a week of events). None of them starts meanwhile: a dispatcher asks `targetIfOwn`
     * just before each, which reads the endpoint enabled and live (on SQLite then, on PostgreSQL by a read
     * at most OWNERSHIP_WINDOW_MS old, which the answer waits out); one already in flight finishes and its
     * outcome is written, with no retry, also when the endpoint is enabled again before it ends
     * (`writeOutcomes`).
     */
    async failPending(
      trx: Db,
      endpointId: number,
      reason: string,
      now: number,
      limit = ENDING_BATCH,
    ): Promise<number> {
      const some = trx
        .selectFrom('webhook_attempts')
        .select('id')
        .where('endpoint_id', '=', endpointId)
        .where('status', '=', PENDING)
        .limit(limit)
      const result = await trx
        .updateTable('webhook_attempts')
        .set({ status: 'failed', error: reason, at: now })
        .where('id', 'in', some)
        .where('status', '=', PENDING)
        .executeTakeFirst()
      return Number(result.numUpdatedRows)
    },
    /** Deletes finished attempts made before `before`, oldest first, at most `batch` rows; how many. */
    async purge(trx: Db, before: number, batch: number): Promise<number> {
      const old = trx
        .selectFrom('webhook_attempts')
        .select('id')
        .where('status', '<>', PENDING)
        .where('at', '<', before)
        .orderBy('at')
        .limit(batch)
      const result = await trx.deleteFrom('webhook_attempts').where('id', 'in', old).executeTakeFirst()
      return Number(result.numDeletedRows)
    },
  }
}
