import { lockTransaction } from '../db/advisory-lock.js'
import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { currentTraceParent } from '../tracing/tracing.js'
import type { EventType, PING } from './events.repository.js'
import { createOutboxRepository } from './outbox.repository.js'

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
   * write joined a group commit (null: its request was not traced); when not given, the recorder takes the
   * active span's.
   */
  traceParent?: string | null
}

/**
 * Publishers of events on PostgreSQL take this transaction-level lock (held to their commit), so event
 * numbers are drawn in the order publications commit: a walk of `seq > n` can never later meet a smaller
 * number. Writers of changes never take it: they write to `event_outbox`, in no order.
 */
const PUBLISH_LOCK = 0x7065_7473 // "pets"

/** Events one publication moves at most (a publisher loops until the outbox is empty). */
export const PUBLISH_BATCH = 1_000

/**
 * Numbers the events committed so far into `events` (PostgreSQL; SQLite numbers them as they are written),
 * in the caller's transaction, one publisher at a time: every event committed before this call has an id
 * when it returns, and none committed later gets a smaller one. A change that must fall exactly between
 * two events (an endpoint created, re-enabled or subscribed anew, as of the last event) calls it first.
 *
 * `owed`, asked in `trx` once the lock is held: whether any endpoint could be owed these events. When it
 * says no, they are written already fanned out, not marked one by one later (`passOver`). That holds
 * because whatever enables an endpoint publishes first under the same lock, and takes only the events
 * numbered after its own commit: once `owed` has seen none enabled, none can be until this commits.
 */
export async function publishEvents(
  handle: Pick<DbHandle, 'dialect'>,
  trx: Db,
  owed: (trx: Db) => Promise<boolean> = async () => true,
): Promise<number> {
  if (handle.dialect !== 'postgres') return 0
  await lockTransaction(handle, trx, PUBLISH_LOCK)
  const outbox = createOutboxRepository(handle)
  const fannedOut = !(await owed(trx))
  let published = 0
  for (;;) {
    const moved = await outbox.publish(trx, PUBLISH_BATCH, fannedOut)
    published += moved
    if (moved < PUBLISH_BATCH) return published
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
  return createOutboxRepository(handle).insertFannedOut(trx, {
    type: event.type,
    api_key_id: event.accountId,
    resource_version: 1,
    object: JSON.stringify(event.object),
    created_at: event.createdAt,
    trace_parent: currentTraceParent(),
  })
}

export type EventRecorder = ReturnType<typeof createEventRecorder>

/**
 * The outbox's writing side, for the services that change pets and orders: `record` writes the change's
 * events in the change's own transaction. On PostgreSQL they go to `event_outbox` without any lock
 * between writers, and a publisher numbers them (`publishEvents`); SQLite, one writer at a time, numbers
 * them at once.
 */
export function createEventRecorder(handle: Pick<DbHandle, 'dialect'>, now: () => number) {
  const outbox = createOutboxRepository(handle)
  return {
    async record(trx: Db, events: readonly NewEvent[]): Promise<void> {
      if (events.length === 0) return
      const createdAt = now()
      const traceParent = currentTraceParent()
      await outbox.insert(
        trx,
        events.map((event) => ({
          type: event.type,
          api_key_id: event.accountId,
          resource_version: event.resourceVersion,
          object: JSON.stringify(event.object),
          created_at: createdAt,
          // null is a captured "none" (a request sampled out), not a missing one: it stays null.
          trace_parent: event.traceParent === undefined ? traceParent : event.traceParent,
        })),
      )
    },
  }
}
