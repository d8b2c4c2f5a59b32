import { sql } from 'kysely'
import type { Db, EventOutboxTable } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'

/** One event as written (the outbox's row but its id): the change's description, its object as JSON text. */
export type EventInsert = Omit<EventOutboxTable, 'id'>

/**
 * Writes a change's events in its own transaction, with statements compiled once (the pets and orders
 * services record in every write: building and sending a statement of many rows cost the process more
 * than the rest of the event). SQLite: one row per run, in place on the writing connection. PostgreSQL:
 * one statement whatever the count, the rows in one JSON parameter, each object as its JSON text (a
 * string inside the payload: `json_to_recordset` decodes every escape of a JSON value, and refuses
 * `\u0000` and lone surrogates that `JSON.stringify` writes as escapes): the same short SQL each time,
 * cheap to parse and plan, in place of a statement of six parameters a row, new text for every count.
 */
export function createOutboxWriter(handle: Pick<DbHandle, 'dialect' | 'prepareWrite'>) {
  if (handle.dialect === 'postgres') {
    const insertAll = handle.prepareWrite((db, rows: string) =>
      db
        .insertInto('event_outbox')
        .columns(['type', 'api_key_id', 'resource_version', 'object', 'created_at', 'trace_parent'])
        .expression(
          sql`select type, api_key_id, resource_version, object, created_at, trace_parent
            from rows from (json_to_recordset(${rows}::json) as (type text, api_key_id bigint,
              resource_version bigint, object text, created_at bigint, trace_parent text))
            with ordinality as e(type, api_key_id, resource_version, object, created_at, trace_parent, n)
            order by n`,
        ),
    )
    return async (trx: Db, events: readonly EventInsert[]): Promise<void> => {
      await insertAll(trx, [[JSON.stringify(events)]])
    }
  }
  const insertOne = handle.prepareWrite(
    (
      db,
      type: string,
      apiKeyId: number | null,
      resourceVersion: number,
      object: string,
      createdAt: number,
      traceParent: string | null,
    ) =>
      db.insertInto('events').values({
        type,
        api_key_id: apiKeyId,
        resource_version: resourceVersion,
        object,
        created_at: createdAt,
        trace_parent: traceParent,
      }),
  )
  return async (trx: Db, events: readonly EventInsert[]): Promise<void> => {
    await insertOne(
      trx,
      events.map((event) => [
        event.type,
        event.api_key_id,
        event.resource_version,
        event.object,
        event.created_at,
        event.trace_parent,
      ]),
    )
  }
}

/** What an event keeps of its outbox row when it is published: all but the outbox's id. */
const MOVED = ['type', 'api_key_id', 'resource_version', 'object', 'created_at', 'trace_parent'] as const

/**
 * The rest of the writing side of `events` and `event_outbox` (events.repository.ts reads them;
 * `createOutboxWriter` writes a change's): the outbox moved to `events` in publication order
 * (PostgreSQL), and an event written already fanned out. events.publisher.ts says when each runs and
 * under which lock.
 */
export function createOutboxRepository() {
  return {
    /**
     * Moves up to `limit` events from the outbox to `events`, oldest first, numbered in that order; how
     * many (PostgreSQL). One statement: the rows go from table to table inside the server (a DELETE …
     * RETURNING feeding the INSERT), never through this process. `fannedOut`: written already fanned out
     * (nobody is owed them: events.publisher.ts).
     */
    async publish(trx: Db, limit: number, fannedOut: boolean): Promise<number> {
      const result = await trx
        .with('moved', (db) =>
          db
            .deleteFrom('event_outbox')
            .where('id', 'in', (eb) => eb.selectFrom('event_outbox').select('id').orderBy('id').limit(limit))
            .returning(['id', ...MOVED]),
        )
        .insertInto('events')
        .columns([...MOVED, 'fanned_out'])
        .expression((eb) =>
          eb
            .selectFrom('moved')
            .select([...MOVED, sql.lit(fannedOut ? 1 : 0).as('fanned_out')])
            .orderBy('id'),
        )
        .executeTakeFirst()
      return Number(result.numInsertedOrUpdatedRows ?? 0)
    },
    /** One event numbered at once and written already fanned out; its number. */
    async insertFannedOut(trx: Db, event: EventInsert): Promise<number> {
      const row = await trx
        .insertInto('events')
        .values({ ...event, fanned_out: 1 })
        .returning('seq')
        .executeTakeFirstOrThrow()
      return row.seq
    },
  }
}
