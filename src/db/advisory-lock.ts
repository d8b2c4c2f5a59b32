import { sql } from 'kysely'
import type { Db } from './database.js'
import type { DbHandle } from './handle.js'

/**
 * Serialises the transactions that call it with the same `key` on PostgreSQL (a transaction-level
 * advisory lock, released at commit or rollback). SQLite has one writer at a time anyway. Taken `shared`,
 * transactions run side by side and wait only for one that holds it whole (and it for them).
 */
export async function lockTransaction(
  handle: Pick<DbHandle, 'dialect'>,
  trx: Db,
  key: number,
  mode: 'whole' | 'shared' = 'whole',
): Promise<void> {
  if (handle.dialect !== 'postgres') return
  const lock =
    mode === 'shared'
      ? sql`select pg_advisory_xact_lock_shared(${key})`
      : sql`select pg_advisory_xact_lock(${key})`
  await lock.execute(trx)
}
