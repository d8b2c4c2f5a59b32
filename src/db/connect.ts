import type { DatabaseConfig } from '../config.js'
import type { DbHandle } from './handle.js'
import { isPostgresUnavailable, openPostgres } from './postgres.js'
import { openSqlite, type SqliteOptions } from './sqlite.js'

/** Opens the database named by the configuration. */
export function connectDatabase(database: DatabaseConfig, options: SqliteOptions = {}): DbHandle {
  return database.kind === 'postgres' ? openPostgres(database) : openSqlite(database.path, options)
}

const UNAVAILABLE_SQLITE_CODES = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|READONLY)/

/** True when the error means the store cannot serve now (answer 503) rather than a bug (500). */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return (typeof code === 'string' && UNAVAILABLE_SQLITE_CODES.test(code)) || isPostgresUnavailable(error)
}
