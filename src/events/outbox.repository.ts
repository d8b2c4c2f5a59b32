import { sql } from 'kysely'
import type { Db, EventOutboxTable } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'

/** One event as written (the outbox's row but its id): the change's description, its object as JSON text. */
export type EventInsert = Omit<EventOutboxTable, 'id'>

/** What an event keeps of its outbox row when it is published: all but the outbox's id. */
const MOVED = ['type', 'api_key_id', 'resource_version', 'object', 'created_at', 'trace_parent'] as const

/** Rows per INSERT (a group commit may hold thousands of creates): 6 parameters each. */
export const INSERT_CHUNK_ROWS = 1_000

/**
 * The writing side of `events` and `event_outbox` (events.repository.ts reads them): a change's events in
 * its own transaction, the outbox moved to `events` in publication order (PostgreSQL), and an event
 * written already fanned out. events.publisher.ts says when each runs and under which lock.
 */
export function createOutboxRepository(handle: Pick<DbHandle, 'dialect'>) {
  // PostgreSQL: writers share no lock, a publisher numbers their events; SQLite numbers them as written.
  const table = handle.dialect === 'postgres' ? 'event_outbox' : 'events'
  return {
    /** A change's events, in its transaction. */
    async insert(trx: Db, events: readonly EventInsert[]): Promise<void> {
      for (let start = 0; start < events.length; start += INSERT_CHUNK_ROWS) {
        await trx
          .insertInto(table)
          .values(events.slice(start, start + INSERT_CHUNK_ROWS))
          .execute()
      }
    },
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
