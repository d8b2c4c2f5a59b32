import type { DatabaseConfig } from '../config.js'
import type { DbHandle } from './handle.js'
import { isPostgresUnavailable, openPostgres } from './postgres.js'
import { openSqlite } from './sqlite.js'

/**
 * Opens the database named by the configuration. `bounded`: every wait has the configured deadline (what
 * requests use); unbounded is for migrations, which may take as long as they take.
 */
export function connectDatabase(database: DatabaseConfig, bounded = true): DbHandle {
  const timeoutMs = bounded ? database.timeoutMs : undefined
  return database.kind === 'postgres'
    ? openPostgres(database, timeoutMs)
    : openSqlite(database.path, { timeoutMs })
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
