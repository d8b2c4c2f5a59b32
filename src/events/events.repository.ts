import { type Selectable, sql } from 'kysely'
import type { Db, EventsTable } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'

/** Every type of event a change emits (CONTRACT §14): what endpoints subscribe to. */
export const EVENT_TYPES = [
  'pet.created',
  'pet.updated',
  'pet.deleted',
  'order.placed',
  'order.approved',
  'order.delivered',
  'order.cancelled',
] as const

export type EventType = (typeof EVENT_TYPES)[number]

/**
 * A test event (`POST /v1/webhook_endpoints/{id}/test`): sent to the one endpoint it tests, never fanned
 * out, and no subscription names it.
 */
export const PING = 'ping'

/** Every type an event has in the event log (its `type` filter): the changes' and the test events'. */
export const LISTED_EVENT_TYPES = [...EVENT_TYPES, PING] as const

export type EventRow = Selectable<EventsTable>

/**
 * The last event id committed now, as a SQL value for a writer's statement (after `publishEvents` in its
 * transaction): an endpoint created, re-enabled or subscribed anew then takes the events after it.
 */
export const lastEventSeq = () => sql<number>`(select coalesce(max(seq), 0) from events)`

/**
 * `fanned_out = 0` written into the SQL text, not bound, so that the partial index `events_waiting` is
 * planned once (as `PENDING` in webhooks/attempts.repository.ts says).
 */
const WAITING = sql.lit(0)

/** Digits of an event id's number: 16 hold every safe integer. */
export const EVENT_ID_DIGITS = 16
const EVENT_ID = new RegExp(`^evt_(\\d{${EVENT_ID_DIGITS}})$`)

/** Public event ids sort as text in commit order: `evt_` and the sequence number, zero-padded. */
export const eventIdOf = (seq: number): string => `evt_${String(seq).padStart(EVENT_ID_DIGITS, '0')}`

/** The sequence number an event id names, or undefined when it is not one. */
export function seqOfEventId(id: string): number | undefined {
  const match = EVENT_ID.exec(id)
  const seq = match ? Number(match[1]) : 0
  return seq >= 1 && seq <= Number.MAX_SAFE_INTEGER ? seq : undefined
}

/** The event as sent and listed: the same bytes on every attempt, every redelivery and every read. */
export function eventBodyOf(
  row: Pick<EventRow, 'seq' | 'type' | 'created_at' | 'resource_version' | 'object'>,
): string {
  const head = JSON.stringify({
    id: eventIdOf(row.seq),
    type: row.type,
    createdAt: new Date(row.created_at).toISOString(),
    resourceVersion: row.resource_version,
  })
  return `${head.slice(0, -1)},"data":{"object":${row.object}}}`
}

/** An event waiting to be fanned out, and how far it got (the last endpoint id it reached). */
export interface WaitingEvent {
  seq: number
  type: string
  api_key_id: number | null
  fan_out_after: number
  /** The emitting change's trace context: the fan-out's span links to it. */
  trace_parent: string | null
}

export type EventsRepository = ReturnType<typeof createEventsRepository>

/**
 * The only code that reads and writes the `events` and `event_outbox` tables besides their writing side
 * (events.publisher.ts: the recorder and publication): the event list, the fan-out's queue (events not
 * fanned out yet) and retention.
 */
export function createEventsRepository(handle: DbHandle) {
  const visible = (db: Db, apiKeyId: number, since: number) =>
    db
      .selectFrom('events')
      .selectAll()
      .where((eb) => eb.or([eb('api_key_id', 'is', null), eb('api_key_id', '=', apiKeyId)]))
      .where('created_at', '>=', since)
  const page = handle.prepareRead((db, apiKeyId: number, since: number, afterSeq: number, limit: number) =>
    visible(db, apiKeyId, since).where('seq', '>', afterSeq).orderBy('seq').limit(limit),
  )
  const pageOfType = handle.prepareRead(
    (db, apiKeyId: number, since: number, afterSeq: number, type: string, limit: number) =>
      visible(db, apiKeyId, since)
        .where('type', '=', type)
        .where('seq', '>', afterSeq)
        .orderBy('seq')
        .limit(limit),
  )
  // Newest first (`order=desc`): before `beforeSeq`, descending.
  const newest = handle.prepareRead((db, apiKeyId: number, since: number, beforeSeq: number, limit: number) =>
    visible(db, apiKeyId, since).where('seq', '<', beforeSeq).orderBy('seq', 'desc').limit(limit),
  )
  const newestOfType = handle.prepareRead(
    (db, apiKeyId: number, since: number, beforeSeq: number, type: string, limit: number) =>
      visible(db, apiKeyId, since)
        .where('type', '=', type)
        .where('seq', '<', beforeSeq)
        .orderBy('seq', 'desc')
        .limit(limit),
  )
  const one = handle.prepareRead((db, apiKeyId: number, since: number, seq: number) =>
    visible(db, apiKeyId, since).where('seq', '=', seq),
  )
  const waiting = handle.prepareRead((db) =>
    db.selectFrom('events').select('seq').where('fanned_out', '=', WAITING).orderBy('seq').limit(1),
  )
  // Along the outbox's key, never a scan of its heap: between two vacuums the heap holds every row moved
  // out since the last, and a scan reads them all to find none left.
  const unpublished = handle.prepareRead((db) =>
    db.selectFrom('event_outbox').select('id').orderBy('id').limit(1),
  )
  const lastUnpublished = handle.prepareRead((db) =>
    db.selectFrom('event_outbox').select((eb) => eb.fn.max('id').as('id')),
  )
  const unpublishedUpTo = handle.prepareRead((db, upTo: number) =>
    db.selectFrom('event_outbox').select('id').where('id', '<=', upTo).orderBy('id').limit(1),
  )
  // The queue's gauges read along indexes and stop at `cap`: a backlog of millions must not make a scrape
  // long (on SQLite it runs on the event loop that serves requests).
  const notFannedOut = (db: Db) => db.selectFrom('events').where('fanned_out', '=', WAITING)
  const waitingCount = handle.prepareRead((db, cap: number) =>
    db
      .selectFrom(notFannedOut(db).select('seq').limit(cap).as('w'))
      .select((eb) => eb.fn.countAll<number>().as('depth')),
  )
  const unpublishedCount = handle.prepareRead((db, cap: number) =>
    db
      .selectFrom(db.selectFrom('event_outbox').select('id').orderBy('id').limit(cap).as('w'))
      .select((eb) => eb.fn.countAll<number>().as('depth')),
  )
  // The queue's head, the first to be fanned out (numbered in commit order), and the outbox's.
  const oldestWaiting = handle.prepareRead((db) =>
    notFannedOut(db).select('created_at').orderBy('seq').limit(1),
  )
  const oldestUnpublished = handle.prepareRead((db) =>
    db.selectFrom('event_outbox').select('created_at').orderBy('id').limit(1),
  )

  return {
    /** A keyset page of the events `apiKeyId` sees, committed since `since`, after `afterSeq`. */
    page: (apiKeyId: number, since: number, afterSeq: number, limit: number, type?: string) =>
      type === undefined
        ? page(apiKeyId, since, afterSeq, limit)
        : pageOfType(apiKeyId, since, afterSeq, type, limit),
    /** The same, newest first: the events before `beforeSeq`, descending. */
    newestPage: (apiKeyId: number, since: number, beforeSeq: number, limit: number, type?: string) =>
      type === undefined
        ? newest(apiKeyId, since, beforeSeq, limit)
        : newestOfType(apiKeyId, since, beforeSeq, type, limit),
    /** One event `apiKeyId` sees, committed since `since`. */
    async find(apiKeyId: number, since: number, seq: number): Promise<EventRow | undefined> {
      const [row] = await one(apiKeyId, since, seq)
      return row
    },
    /** Up to `limit` events not fanned out yet, oldest first (PostgreSQL: those no other step holds). */
    async waitingIn(trx: Db, limit: number): Promise<WaitingEvent[]> {
      let query = trx
        .selectFrom('events')
        .select(['seq', 'type', 'api_key_id', 'fan_out_after', 'trace_parent'])
        .where('fanned_out', '=', WAITING)
        .orderBy('seq')
        .limit(limit)
      if (handle.dialect === 'postgres') query = query.forUpdate().skipLocked()
      return query.execute()
    },
    async markFannedOut(trx: Db, seqs: readonly number[]): Promise<void> {
      if (seqs.length > 0)
        await trx
          .updateTable('events')
          .set({ fanned_out: 1 })
          .where('seq', 'in', [...seqs])
          .execute()
    },
    /** The last event id committed (0 when none). */
    lastSeqIn: async (trx: Db): Promise<number> =>
      Number((await trx.selectNoFrom(lastEventSeq().as('seq')).executeTakeFirstOrThrow()).seq),
    /** Marks up to `limit` waiting events with an id up to `upTo` fanned out, oldest first; how many. */
    async markWaitingUpTo(trx: Db, upTo: number, limit: number): Promise<number> {
      const oldest = trx
        .selectFrom('events')
        .select('seq')
        .where('fanned_out', '=', WAITING)
        .where('seq', '<=', upTo)
        .orderBy('seq')
        .limit(limit)
      const result = await trx
        .updateTable('events')
        .set({ fanned_out: 1 })
        .where('seq', 'in', oldest)
        .executeTakeFirst()
      return Number(result.numUpdatedRows)
    },
    /** An event fanned out in part: the last endpoint id it reached. */
    async keepFanOutPlace(trx: Db, seq: number, endpointId: number): Promise<void> {
      await trx.updateTable('events').set({ fan_out_after: endpointId }).where('seq', '=', seq).execute()
    },
    /** Whether any published event waits to be fanned out (a cheap read before a write transaction). */
    anyWaiting: async (): Promise<boolean> => (await waiting()).length > 0,
    /** Whether events wait to be published (PostgreSQL: `publishEvents` numbers them). */
    anyUnpublished: async (): Promise<boolean> => (await unpublished()).length > 0,
    /** The outbox's last id (undefined when empty): every event committed so far has one up to it. */
    lastUnpublished: async (): Promise<number | undefined> => {
      const [row] = await lastUnpublished()
      return row?.id == null ? undefined : Number(row.id)
    },
    /** Whether events with an outbox id up to `upTo` still wait to be published. */
    anyUnpublishedUpTo: async (upTo: number): Promise<boolean> => (await unpublishedUpTo(upTo)).length > 0,
    /** The oldest event not fanned out yet, or undefined: older subscriptions are needed by nobody. */
    oldestWaitingIn: async (trx: Db): Promise<number | undefined> =>
      (
        await trx
          .selectFrom('events')
          .select('seq')
          .where('fanned_out', '=', WAITING)
          .orderBy('seq')
          .limit(1)
          .executeTakeFirst()
      )?.seq,
    /**
     * Events not fanned out yet (published or not), counted up to `cap`, and the commit time of the first
     * to be fanned out (metrics): each read goes along an index and stops at `cap` rows.
     */
    async outbox(cap: number): Promise<{ depth: number; oldest: number | null }> {
      const counts = [...(await waitingCount(cap)), ...(await unpublishedCount(cap))]
      const heads = [...(await oldestWaiting()), ...(await oldestUnpublished())].map((row) =>
        Number(row.created_at),
      )
      return {
        depth: Math.min(
          cap,
          counts.reduce((sum, row) => sum + Number(row.depth), 0),
        ),
        oldest: heads.length > 0 ? Math.min(...heads) : null,
      }
    },
    /**
     * Deletes events older than `before` that were fanned out, oldest first, at most `batch` rows; how
     * many. An event still waiting is kept, however old: its deliveries were promised at its commit.
     */
    async purge(trx: Db, before: number, batch: number): Promise<number> {
      const old = trx
        .selectFrom('events')
        .select('seq')
        .where('created_at', '<', before)
        .where('fanned_out', '=', 1)
        .orderBy('created_at')
        .limit(batch)
      const result = await trx.deleteFrom('events').where('seq', 'in', old).executeTakeFirst()
      return Number(result.numDeletedRows)
    },
  }
}
