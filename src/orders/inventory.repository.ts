import { sql } from 'kysely'
import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import type { Inventory } from './orders.schemas.js'

/** Rows folded per transaction: each fold stays well inside the request deadline, however long the backlog. */
export const FOLD_BATCH = 10_000

export type InventoryRepository = ReturnType<typeof createInventoryRepository>

/**
 * The SQL of the inventory: the sum per status of the `pet_status_counts` rows that triggers append
 * (migration 0006), read on the handle's prepared read path, and the fold that keeps those rows few.
 */
export function createInventoryRepository(handle: DbHandle) {
  const sums = handle.prepareRead((db: Db) =>
    db
      .selectFrom('pet_status_counts')
      .select(['status', (eb) => eb.fn.sum<number | string>('count').as('count')])
      .groupBy('status'),
  )
  const span = handle.prepareRead((db: Db) =>
    db
      .selectFrom('pet_status_counts')
      .select([(eb) => eb.fn.min('id').as('first'), (eb) => eb.fn.max('id').as('last')]),
  )
  const fold = handle.dialect === 'postgres' ? foldOnPostgres : foldOnSqlite

  return {
    async readInventory(): Promise<Inventory> {
      const counts: Inventory = { available: 0, pending: 0, sold: 0 }
      for (const row of await sums()) {
        if (row.status in counts) counts[row.status as keyof Inventory] = Number(row.count)
      }
      return counts
    },

    /** About how many rows the counts have (from the id range: no scan). */
    async statusCountRows(): Promise<number> {
      const [range] = await span()
      return range?.first == null ? 0 : Number(range.last) - Number(range.first) + 1
    },

    /** Folds the oldest `limit` rows into one per status, in one transaction; returns how many it folded. */
    foldStatusCounts: (limit: number): Promise<number> => handle.write((trx) => fold(trx, limit)),

    /** Folds batch after batch until a batch comes back short: every row appended so far is folded. */
    async compactStatusCounts(limit: number = FOLD_BATCH): Promise<void> {
      // Each batch is its own transaction: writers of pets wait for one batch at most.
      let folded: number
      do folded = await handle.write((trx) => fold(trx, limit))
      while (folded >= limit)
    },
  }
}

/**
 * PostgreSQL: one statement deletes the batch and sums what it deleted. A row appended meanwhile by a
 * transaction this one cannot see stays for the next time, and of two instances folding at once the second
 * skips the rows the first deleted (it waits for their locks): no row is folded twice or lost.
 */
async function foldOnPostgres(trx: Db, limit: number): Promise<number> {
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

/** SQLite has one writer: the rows up to the batch's last id are summed, then deleted; nothing slips in. */
async function foldOnSqlite(trx: Db, limit: number): Promise<number> {
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
}
