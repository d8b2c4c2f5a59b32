import { PostgresAdapter, sql } from 'kysely'
import type { Logger } from 'pino'
import type { Db } from '../db/database.js'
import { createFreshCache } from '../db/fresh-cache.js'
import type { DbHandle } from '../db/handle.js'
import type { Inventory } from './orders.schemas.js'

/** How often each instance looks whether the counts need folding, and from how many rows it folds them. */
export const COMPACT_INTERVAL_MS = 1_000
export const COMPACT_FROM_ROWS = 256

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

/**
 * Replaces the rows by one per status (their sum), in one transaction, summed by the database (an import of a
 * million pets folds without a million rows coming to this process).
 * - SQLite has one writer: the rows up to the last id are summed, then deleted; nothing can slip in between.
 * - PostgreSQL: one statement deletes and sums what it deleted. A row appended meanwhile by a transaction
 *   this one cannot see stays for the next time, and of two instances folding at once the second skips the
 *   rows the first deleted (it waits for their locks): no row is folded twice or lost.
 */
export async function compactStatusCounts(handle: Pick<DbHandle, 'write'>): Promise<void> {
  await handle.write(async (trx) => {
    if (trx.getExecutor().adapter instanceof PostgresAdapter) {
      await sql`
        with moved as (delete from pet_status_counts returning status, count)
        insert into pet_status_counts (status, count)
        select status, sum(count) from moved group by status having sum(count) <> 0
      `.execute(trx)
      return
    }
    const { last } = await trx
      .selectFrom('pet_status_counts')
      .select((eb) => eb.fn.max('id').as('last'))
      .executeTakeFirstOrThrow()
    if (last === null) return
    await sql`
      insert into pet_status_counts (status, count)
      select status, sum(count) from pet_status_counts where id <= ${last} group by status having sum(count) <> 0
    `.execute(trx)
    await trx.deleteFrom('pet_status_counts').where('id', '<=', last).execute()
  })
}

export type InventoryCounter = ReturnType<typeof createInventoryCounter>

/** Reads the inventory (kept while SQLite's change token holds) and folds the counts every second. */
export function createInventoryCounter(deps: { handle: DbHandle; logger: Logger }) {
  const { handle, logger } = deps
  const cache = createFreshCache<Inventory>(handle.changeToken, 1)
  let compacting: Promise<void> | undefined

  async function compactIfLong(): Promise<void> {
    const span = await handle.db
      .selectFrom('pet_status_counts')
      .select([(eb) => eb.fn.min('id').as('first'), (eb) => eb.fn.max('id').as('last')])
      .executeTakeFirstOrThrow()
    if (span.first === null || Number(span.last) - Number(span.first) < COMPACT_FROM_ROWS) return
    await compactStatusCounts(handle)
  }

  const timer = setInterval(() => {
    compacting ??= compactIfLong()
      .catch((error) => logger.warn({ err: error }, 'folding the inventory counts failed'))
      .finally(() => {
        compacting = undefined
      })
  }, COMPACT_INTERVAL_MS)
  timer.unref()

  return {
    async read(): Promise<Inventory> {
      const { value, token } = cache.lookup('all')
      return value ?? cache.store('all', token, await readInventory(handle.db))
    },
    async close(): Promise<void> {
      clearInterval(timer)
      await compacting
    },
  }
}
