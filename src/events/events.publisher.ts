import { lockTransaction } from '../db/advisory-lock.js'
import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { currentTraceParent } from '../tracing/tracing.js'
import type { EventType, PING } from './events.repository.js'

/** One change, as the service that made it describes it. */
export interface NewEvent {
  type: EventType
  /** The account an order's event belongs to; null for a pet's (every account sees those). */
  accountId: number | null
  /** The pet's or order's version right after the change. */
  resourceVersion: number
  /** The Pet or Order as the API returns it right after the change. */
  object: object
  /**
   * The change's trace context (tracing/tracing.ts `currentTraceParent`), when it was captured before the
   * write joined a group commit; otherwise the recorder takes the active span's.
   */
  traceParent?: string | null
}

/**
 * Publishers of events on PostgreSQL take this transaction-level lock (held to their commit), so event
 * numbers are drawn in the order publications commit: a walk of `seq > n` can never later meet a smaller
 * number. Writers of changes never take it: they write to `event_outbox`, in no order.
 */
const PUBLISH_LOCK = 0x7065_7473 // "pets"

/** Rows per INSERT (a group commit may hold thousands of creates): 5 parameters each. */
const INSERT_CHUNK_ROWS = 1_000
/** Events one publication moves at most (a publisher loops until the outbox is empty). */
const PUBLISH_BATCH = 1_000

/**
 * Numbers the events committed so far into `events` (PostgreSQL; SQLite numbers them as they are written),
 * in the caller's transaction, one publisher at a time: every event committed before this call has an id
 * when it returns, and none committed later gets a smaller one. A change that must fall exactly between
 * two events (an endpoint created, re-enabled or subscribed anew, as of the last event) calls it first.
 */
export async function publishEvents(handle: Pick<DbHandle, 'dialect'>, trx: Db): Promise<number> {
  if (handle.dialect !== 'postgres') return 0
  await lockTransaction(handle, trx, PUBLISH_LOCK)
  let published = 0
  for (;;) {
    const rows = await trx
      .selectFrom('event_outbox')
      .select(['id', 'type', 'api_key_id', 'resource_version', 'object', 'created_at', 'trace_parent'])
      .orderBy('id')
      .limit(PUBLISH_BATCH)
      .execute()
    if (rows.length === 0) return published
    await trx
      .insertInto('events')
      .values(rows.map(({ id: _, ...event }) => event))
      .execute()
    await trx
      .deleteFrom('event_outbox')
      .where(
        'id',
        'in',
        rows.map((row) => row.id),
      )
      .execute()
    published += rows.length
    if (rows.length < PUBLISH_BATCH) return published
  }
}

/** An event for one endpoint only, the account's: a test event. */
export interface AddressedEvent {
  type: typeof PING
  accountId: number
  object: object
  createdAt: number
}

/**
 * Writes an event that bypasses the fan-out, in the caller's transaction, and returns its number: it is
 * numbered at once (on PostgreSQL as a publisher, after what waits in the outbox, so ids still follow
 * commit order; a caller that took the lock already by `publishEvents` keeps it) and written already
 * fanned out, so that no endpoint but the one the caller writes an
 * attempt for in the same transaction ever gets it. Its `resourceVersion` is 1: it changes nothing.
 */
export async function publishAddressedEvent(
  handle: Pick<DbHandle, 'dialect'>,
  trx: Db,
  event: AddressedEvent,
): Promise<number> {
  await publishEvents(handle, trx)
  const row = await trx
    .insertInto('events')
    .values({
      type: event.type,
      api_key_id: event.accountId,
      resource_version: 1,
      object: JSON.stringify(event.object),
      created_at: event.createdAt,
      trace_parent: currentTraceParent(),
      fanned_out: 1,
    })
    .returning('seq')
    .executeTakeFirstOrThrow()
  return row.seq
}

export type EventRecorder = ReturnType<typeof createEventRecorder>

/**
 * The outbox's writing side, for the services that change pets and orders: `record` writes the change's
 * events in the change's own transaction. On PostgreSQL they go to `event_outbox` without any lock
 * between writers, and a publisher numbers them (`publishEvents`); SQLite, one writer at a time, numbers
 * them at once.
 */
export function createEventRecorder(handle: Pick<DbHandle, 'dialect'>, now: () => number) {
  const table = handle.dialect === 'postgres' ? 'event_outbox' : 'events'
  return {
    async record(trx: Db, events: readonly NewEvent[]): Promise<void> {
      if (events.length === 0) return
      const createdAt = now()
      const traceParent = currentTraceParent()
      for (let start = 0; start < events.length; start += INSERT_CHUNK_ROWS) {
        const rows = events.slice(start, start + INSERT_CHUNK_ROWS).map((event) => ({
          type: event.type,
          api_key_id: event.accountId,
          resource_version: event.resourceVersion,
          object: JSON.stringify(event.object),
          created_at: createdAt,
          trace_parent: event.traceParent ?? traceParent,
        }))
        await trx.insertInto(table).values(rows).execute()
      }
    },
  }
}
