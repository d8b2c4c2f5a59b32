import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import type { DatabaseConfig } from '../config.js'
import { registerChangeToken } from './change-token.js'
import type { Db } from './database.js'
import { connectPostgres, isPostgresUnavailable } from './postgres.js'
import { registerDirectRunner } from './precompiled.js'
import { createSqliteReader, withStatementCache } from './sqlite-runner.js'

export interface DatabaseOptions {
  /** How long a write waits for another connection's lock before the request gets 503. */
  busyTimeoutMs?: number
}

/**
 * Opens the database named by the configuration. SQLite runs in WAL mode with synchronous=FULL:
 * a 201 is only sent after the pet is on disk.
 */
export function connectDatabase(database: DatabaseConfig, options: DatabaseOptions = {}): Db {
  return database.kind === 'postgres' ? connectPostgres(database) : connectSqlite(database.path, options)
}

function connectSqlite(path: string, options: DatabaseOptions): Db {
  const sqlite = openSqlite(path)
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('synchronous = FULL')
  sqlite.pragma('foreign_keys = ON')
  sqlite.pragma(`busy_timeout = ${Math.trunc(options.busyTimeoutMs ?? 5000)}`)
  // Reads through a memory map and a 16 MiB page cache instead of a read() per page.
  sqlite.pragma('mmap_size = 268435456')
  sqlite.pragma('cache_size = -16384')
  const db: Db = new Kysely({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) })
  registerDirectRunner(db, createSqliteReader(sqlite))
  // Changes when any other connection (another process, the CLI) commits; not for this one's writes.
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck()
  registerChangeToken(db, () => dataVersion.get())
  return db
}

function openSqlite(path: string): SQLite.Database {
  try {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
    return new SQLite(path)
  } catch (error) {
    throw new Error(
      `cannot open the database file ${path} named by DATABASE_URL: ${(error as Error).message}`,
    )
  }
}

const UNAVAILABLE_SQLITE_CODES = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|READONLY)/

/** True when the error means the store cannot serve now (answer 503) rather than a bug (500). */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return (typeof code === 'string' && UNAVAILABLE_SQLITE_CODES.test(code)) || isPostgresUnavailable(error)
}
