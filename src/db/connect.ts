import type { DatabaseConfig } from '../config.js'
import type { DbHandle } from './handle.js'
import { openSqlite } from './sqlite.js'

/**
 * Opens the database named by the configuration. `bounded`: every wait has the configured deadline (what
 * requests use); unbounded is for migrations, which may take as long as they take.
 */
export async function connectDatabase(database: DatabaseConfig, bounded = true): Promise<DbHandle> {
  const timeoutMs = bounded ? database.timeoutMs : undefined
  if (database.kind === 'sqlite') return openSqlite(database.path, { timeoutMs })
  // Loaded for PostgreSQL only: an instance on SQLite, and the CLI, never load pg.
  const { openPostgres } = await import('./postgres.js')
  return openPostgres(database, timeoutMs)
}

const UNAVAILABLE_SQLITE_CODES = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|READONLY)/

/** True when the error means the store cannot serve now (answer 503) rather than a bug (500). */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  if (code === 'PETSTORE_DB_TIMEOUT') return true
  return (typeof code === 'string' && UNAVAILABLE_SQLITE_CODES.test(code)) || isPostgresUnavailable(error)
}

/** SQLite's and PostgreSQL's "the storage cannot take this write": a full disk, an I/O error, read-only. */
const STORAGE_WRITE_FAILURES = /^(SQLITE_(IOERR|CANTOPEN|FULL|READONLY)|53100|58030|25006)/

/** True when the storage itself refused to write (CONTRACT §12: /readyz is 503 until a write succeeds). */
export function isStorageWriteFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && STORAGE_WRITE_FAILURES.test(code)
}

/** Errors that mean PostgreSQL cannot serve now (answer 503), not a bug. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '57014', // query_canceled: the statement timeout
  '55P03', // lock_not_available: the lock timeout
  '40P01', // deadlock_detected: PostgreSQL rolled this transaction back; a retry may succeed
  '40001', // serialization_failure: likewise
  '53100', // disk_full
  '53200', // out_of_memory
  '58030', // io_error
  '25006', // read_only_sql_transaction: a standby, or default_transaction_read_only
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
])

export function isPostgresUnavailable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown }
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true
  return (
    typeof message === 'string' &&
    /Connection terminated|timeout exceeded when trying to connect/.test(message)
  )
}
