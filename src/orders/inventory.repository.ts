import { PostgresAdapter, sql } from 'kysely'
import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import type { Inventory } from './orders.schemas.js'

/** Rows folded per transaction: each fold stays well inside the request deadline, however long the backlog. */
export const FOLD_BATCH = 10_000

/** The inventory: the sum per status of the `pet_status_counts` rows that triggers append (migration 0006). */
export async function readInventory(db: Db): Promise<Inventory> {
  const rows = await db
    .selectFrom('pet_status_counts')
    .select(['status', (eb) => eb.fn.sum<number | string>('count').as('count')])
    .groupBy('status')
    .execute()
  const counts: Inventory = { available: 0, pending: 0, sold: 0 }
  for (const row of rows) if (row.status in counts) counts[row.status as keyof Inventory] = Number(row.count)
  return counts
}

/** About how many rows the counts have (from the id range: no scan). */
export async function statusCountRows(db: Db): Promise<number> {
  const span = await db
    .selectFrom('pet_status_counts')
    .select([(eb) => eb.fn.min('id').as('first'), (eb) => eb.fn.max('id').as('last')])
    .executeTakeFirstOrThrow()
  return span.first === null ? 0 : Number(span.last) - Number(span.first) + 1
}

/**
 * Folds the oldest `limit` rows into one per status (their sum) in one transaction, summed by the database;
 * returns how many rows it folded. The one place whose SQL differs by database:
 * - SQLite has one writer: the rows up to the batch's last id are summed, then deleted; nothing slips in.
 * - PostgreSQL: one statement deletes the batch and sums what it deleted. A row appended meanwhile by a
 *   transaction this one cannot see stays for the next time, and of two instances folding at once the second
 *   skips the rows the first deleted (it waits for their locks): no row is folded twice or lost.
 */
export async function foldStatusCounts(handle: Pick<DbHandle, 'write'>, limit: number): Promise<number> {
  return handle.write(async (trx) => {
    if (trx.getExecutor().adapter instanceof PostgresAdapter) {
      const { rows } = await sql<{ moved: number }>`
        with moved as (
          delete from pet_status_counts
          where id in (select id from pet_status_counts order by id limit ${limit})
          returning status, count
        ), folded as (
          insert into pet_status_counts (status, count)
          select status, sum(count) from moved group by status having sum(count) <> 0
        )
        select count(*)::int as moved from moved
      `.execute(trx)
      return rows[0]?.moved ?? 0
    }
    const batch = await sql<{ last: number | null; moved: number }>`
      select max(id) as last, count(*) as moved
      from (select id from pet_status_counts order by id limit ${limit})
    `.execute(trx)
    const { last = null, moved = 0 } = batch.rows[0] ?? {}
    if (last === null) return 0
    await sql`
      insert into pet_status_counts (status, count)
      select status, sum(count) from pet_status_counts where id <= ${last} group by status having sum(count) <> 0
    `.execute(trx)
    await trx.deleteFrom('pet_status_counts').where('id', '<=', last).execute()
    return moved
  })
}

/** Folds batch after batch until a batch comes back short: every row appended so far is folded. */
export async function compactStatusCounts(
  handle: Pick<DbHandle, 'write'>,
  limit: number = FOLD_BATCH,
): Promise<void> {
  // Each batch is its own transaction: writers of pets wait for one batch at most.
  let folded: number
  do folded = await foldStatusCounts(handle, limit)
  while (folded >= limit)
}
