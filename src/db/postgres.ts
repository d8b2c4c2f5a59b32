import { type Compilable, Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import type { DatabaseConfig } from '../config.js'
import type { Db } from './database.js'
import { compileRead, type DbHandle, parametersOf } from './handle.js'

const INT8_OID = 20

/** int8 columns (ids, times, limits) as numbers, refusing any value a JavaScript number cannot hold exactly. */
function parseInt8(text: string): number {
  const value = Number(text)
  if (!Number.isSafeInteger(value)) throw new Error(`int8 value ${text} is beyond 2^53 - 1`)
  return value
}

const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
}

/**
 * A pool sized by configuration, with a statement timeout and a bounded wait for a connection. Reads
 * go through Kysely's executor with SQL compiled once. No change token: PostgreSQL has no cheap exact
 * "nothing changed" signal, so nothing read from it is cached.
 */
export function openPostgres(database: Extract<DatabaseConfig, { kind: 'postgres' }>): DbHandle {
  const pool = new pg.Pool({
    connectionString: database.url,
    max: database.poolSize,
    statement_timeout: database.statementTimeoutMs,
    connectionTimeoutMillis: database.statementTimeoutMs,
    types,
  })
  // An idle client losing its server is reported here; the next query gets a fresh connection.
  pool.on('error', () => {})
  // A client checked out but not yet querying has no listener of the pool's: if the server goes away in
  // that moment its 'error' event would be an uncaught exception. Its query fails instead (503).
  pool.on('connect', (client) => {
    client.on('error', () => {})
  })
  const db: Db = new Kysely({ dialect: new PostgresDialect({ pool }) })
  return {
    db,
    changeToken: undefined,
    prepareRead<Args extends unknown[], Row>(build: (db: Db, ...args: Args) => Compilable<Row>) {
      const read = compileRead(db, build)
      return async (...args: Args) =>
        (await db.executeQuery<Row>({ ...read.compiled, parameters: parametersOf(read, args) })).rows
    },
    close: () => db.destroy(),
  }
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
