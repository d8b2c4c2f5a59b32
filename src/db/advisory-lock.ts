import { sql } from 'kysely'
import type { Db } from './database.js'
import type { DbHandle } from './handle.js'

/**
 * Serialises the transactions that call it with the same `key` on PostgreSQL (a transaction-level
 * advisory lock, released at commit or rollback). SQLite has one writer at a time anyway.
 */
export async function lockTransaction(
  handle: Pick<DbHandle, 'dialect'>,
  trx: Db,
  key: number,
): Promise<void> {
  if (handle.dialect === 'postgres') await sql`select pg_advisory_xact_lock(${key})`.execute(trx)
}

/**
 * `lockTransaction`'s shared form: transactions that take it shared run side by side, and wait only for one
 * that holds it exclusive (and it for them).
 */
export async function lockTransactionShared(
  handle: Pick<DbHandle, 'dialect'>,
  trx: Db,
  key: number,
): Promise<void> {
  if (handle.dialect === 'postgres') await sql`select pg_advisory_xact_lock_shared(${key})`.execute(trx)
}
