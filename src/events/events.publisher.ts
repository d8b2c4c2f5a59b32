import { lockTransaction } from '../db/advisory-lock.js'
import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { AppError, UNAVAILABLE_RETRY_AFTER_S } from '../errors.js'
import { currentTraceParent } from '../tracing/tracing.js'
import { createEventsRepository, type EventType, type PING } from './events.repository.js'
import { createOutboxRepository, createOutboxWriter } from './outbox.repository.js'

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

/** Events one statement of a publication moves at most. */
export const PUBLISH_BATCH = 1_000
/**
 * Statements one publication transaction runs at most: it moves at most PUBLISH_BOUND events, whatever the
 * outbox holds, so that it always commits within the database deadline (2 s by default). Measured on
 * PostgreSQL 15 on 2 shared cores, `events` holding 500,000 rows, each object 344 bytes: a statement of
 * 1,000 took 21 ms (median; 36 ms at p90), a transaction of five 0.1–0.2 s, 0.25–0.5 s with both cores
 * kept busy by other work. Unbounded, a backlog larger than one deadline's worth rolled back at every
 * try, the next try larger still: the outbox never drained, and whoever published waited for ever.
 */
export const PUBLISH_BATCHES_PER_TRANSACTION = 5
export const PUBLISH_BOUND = PUBLISH_BATCH * PUBLISH_BATCHES_PER_TRANSACTION

/** What one publication transaction did: how many events it numbered, and whether it left some (its bound). */
export interface Publication {
  published: number
  more: boolean
}

/**
 * Numbers the events committed so far into `events` (PostgreSQL; SQLite numbers them as they are written),
 * oldest first, in the caller's transaction, one publisher at a time, at most PUBLISH_BOUND of them: none
 * committed later gets a smaller id than those it numbers. `more` when it stopped at its bound with events
 * left: the dispatcher publishes them in its next step, a caller that needs every committed event numbered
 * catches up first (`createEventCatchUp`) and then calls `publishCommitted`.
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
): Promise<Publication> {
  if (handle.dialect !== 'postgres') return { published: 0, more: false }
  await lockTransaction(handle, trx, PUBLISH_LOCK)
  const outbox = createOutboxRepository()
  const fannedOut = !(await owed(trx))
  let published = 0
  for (let batch = 0; batch < PUBLISH_BATCHES_PER_TRANSACTION; batch++) {
    const moved = await outbox.publish(trx, PUBLISH_BATCH, fannedOut)
    published += moved
    if (moved < PUBLISH_BATCH) return { published, more: false }
  }
  return { published, more: true }
}

/**
 * Every event committed before this call numbered when it returns, in the caller's transaction, under the
 * publishers' lock (held to its commit): for a change that must fall exactly between two events (an
 * endpoint created, re-enabled or subscribed anew, as of the last event; a test event, numbered after
 * them). The caller has caught up first (`createEventCatchUp`), so what is left is what committed since:
 * a few events, well within one PUBLISH_BOUND. When more than that committed meanwhile (a burst while the
 * caller waited for the lock or the pool), it cannot keep its promise within the deadline: a 503 with
 * Retry-After (CONTRACT §13), its transaction rolled back; what the catch-up numbered stays numbered.
 */
export async function publishCommitted(handle: Pick<DbHandle, 'dialect'>, trx: Db): Promise<void> {
  if ((await publishEvents(handle, trx)).more) throw behind()
}

/**
 * Publication transactions a catch-up runs at most (PUBLISH_BOUND events each): beyond, its caller answers
 * 503 with Retry-After rather than wait, each try having numbered its share, until the dispatchers and the
 * catch-ups have drained the backlog.
 */
export const CATCH_UP_TRANSACTIONS = 4

/**
 * For a caller that needs every event committed before it to have its id (the event list before a page,
 * an endpoint's creation or PATCH and a test event before their own transaction): numbers them in
 * transactions of its own, each bounded (`publishEvents`), until the outbox holds nothing it held when the
 * call began (ids up to the largest read first; a change still open then commits later, and is owed
 * nothing), or a transaction left none at all. At most CATCH_UP_TRANSACTIONS, else a 503 (Retry-After).
 * It takes the publishers' lock only while such events wait: one a dispatcher numbered costs one read.
 */
export function createEventCatchUp(handle: DbHandle): () => Promise<void> {
  const events = createEventsRepository(handle)
  return async () => {
    if (handle.dialect !== 'postgres') return
    const upTo = await events.lastUnpublished()
    if (upTo === undefined) return
    for (let transaction = 0; await events.anyUnpublishedUpTo(upTo); transaction++) {
      if (transaction === CATCH_UP_TRANSACTIONS) throw behind()
      if (!(await handle.write((trx) => publishEvents(handle, trx))).more) return
    }
  }
}

/** More events wait to be numbered than the caller can within the deadline: retry once they are. */
const behind = () =>
  new AppError('unavailable', 'events are being numbered after a backlog: retry in a moment', {
    'retry-after': String(UNAVAILABLE_RETRY_AFTER_S),
  })

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
 * commit order; a caller that took the lock already by `publishCommitted` keeps it) and written already
 * fanned out, so that no endpoint but the one the caller writes an
 * attempt for in the same transaction ever gets it. Its `resourceVersion` is 1: it changes nothing.
 */
export async function publishAddressedEvent(
  handle: Pick<DbHandle, 'dialect'>,
  trx: Db,
  event: AddressedEvent,
): Promise<number> {
  await publishCommitted(handle, trx)
  return createOutboxRepository().insertFannedOut(trx, {
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
export function createEventRecorder(handle: Pick<DbHandle, 'dialect' | 'prepareWrite'>, now: () => number) {
  const insert = createOutboxWriter(handle)
  return {
    async record(trx: Db, events: readonly NewEvent[]): Promise<void> {
      if (events.length === 0) return
      const createdAt = now()
      const traceParent = currentTraceParent()
      await insert(
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
