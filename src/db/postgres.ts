import {
  type Compilable,
  CompiledQuery,
  Kysely,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  sql,
} from 'kysely'
import pg from 'pg'
import type { DatabaseConfig } from '../config.js'
import { tracingEnabled } from '../tracing/tracing.js'
import type { Db } from './database.js'
import { DatabaseTimeoutError, withDeadline } from './deadline.js'
import { compileWithSlots, type DbHandle, parametersOf } from './handle.js'
import { querySpans, tracedRead } from './query-spans.js'
import { createSnapshotToken, SNAPSHOT_SQL } from './snapshot-token.js'

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
 * A pool sized by configuration, behind deadlines (CONTRACT §13). Each checkout of a connection (one
 * read, or one whole transaction) has `timeoutMs` in all: waiting for the pool or a new connection, then
 * every query on it. A query that outlives the rest of that budget fails with DatabaseTimeoutError and its
 * connection is discarded, never handed to another request mid-answer. The server stops the same work on
 * its side (`statement_timeout`, `lock_timeout`, `idle_in_transaction_session_timeout`). Without `timeoutMs` (migrations) nothing is bounded.
 * Reads are SQL compiled once by Kysely, sent straight to the pool as named statements (PostgreSQL
 * parses and plans each once per connection). The change token is the current snapshot, one query per
 * turn of the event loop (snapshot-token.ts).
 */
/**
 * DATABASE_URL and the `options` startup parameter that sets the server setting `setting` (`-c name=value`)
 * after those DATABASE_URL's own `options` names, or else PGOPTIONS (node-postgres lets a URL's `options`
 * replace the one given beside it, and reads PGOPTIONS only when none is given): the URL comes back
 * without its `options`, the rest of it as written.
 */
export function withServerOption(
  url: string,
  setting: string,
  env: NodeJS.ProcessEnv = process.env,
): { url: string; options: string } {
  const [base = url, query] = url.split(/\?(.*)/s)
  const given = query === undefined ? null : new URLSearchParams(query).get('options')
  const rest = query?.split('&').filter((part) => !/^options(=|$)/.test(part))
  const kept = rest === undefined ? url : rest.length > 0 ? `${base}?${rest.join('&')}` : base
  return { url: kept, options: [given ?? env.PGOPTIONS, `-c ${setting}`].filter(Boolean).join(' ') }
}

export function openPostgres(
  database: Extract<DatabaseConfig, { kind: 'postgres' }>,
  timeoutMs?: number,
): DbHandle {
  const server =
    timeoutMs === undefined ? undefined : withServerOption(database.url, `tcp_user_timeout=${timeoutMs}`)
  const pool = new pg.Pool({
    connectionString: server?.url ?? database.url,
    max: database.poolSize,
    ...(timeoutMs !== undefined && {
      statement_timeout: timeoutMs,
      lock_timeout: timeoutMs,
      // A process frozen mid-transaction (SIGSTOP, a paused VM) keeps its connection and its locks: the
      // server ends such a session after the deadline, so no other instance waits on it for longer.
      idle_in_transaction_session_timeout: timeoutMs,
      // Frozen while the server sends it a result (its socket full, its kernel still answering), it holds
      // its locks in an active statement that no timeout above ends: the server closes a connection whose
      // data stays unread for the deadline (`tcp_user_timeout`), which ends its transaction.
      options: server?.options,
      connectionTimeoutMillis: timeoutMs,
    }),
    types,
  })
  // An idle client losing its server is reported here; the next query gets a fresh connection.
  pool.on('error', () => {})
  // A client checked out but not yet querying has no listener of the pool's: if the server goes away in
  // that moment its 'error' event would be an uncaught exception. Its query fails instead (503).
  pool.on('connect', (client) => {
    client.on('error', () => {})
  })
  const dialectPool: PostgresPool = timeoutMs === undefined ? pool : withDeadlines(pool, timeoutMs)
  const db: Db = new Kysely({
    dialect: new PostgresDialect({ pool: dialectPool }),
    log: querySpans('postgresql'),
  })
  const read = tracingEnabled()
    ? <Row>(statement: pg.QueryConfig) =>
        tracedRead('postgresql', statement.text, () => readOnce<Row>(statement))
    : readOnce
  /** A read on a pooled connection, within the deadline, as a named statement (parsed once per connection). */
  async function readOnce<Row>(statement: pg.QueryConfig): Promise<Row[]> {
    const client = (await dialectPool.connect()) as unknown as pg.PoolClient
    try {
      return (await client.query(statement)).rows
    } finally {
      client.release()
    }
  }
  let statements = 0
  const snapshot = { name: 'petstore_snapshot', text: SNAPSHOT_SQL }
  const changeToken = createSnapshotToken(
    async () => (await read<{ snapshot: string }>(snapshot))[0]?.snapshot ?? '',
  )
  return {
    dialect: 'postgres',
    db,
    changeToken,
    prepareRead<Args extends unknown[], Row>(build: (db: Db, ...args: Args) => Compilable<Row>) {
      const query = compileWithSlots(db, build)
      const name = `petstore_read_${++statements}`
      const text = query.compiled.sql
      return (...args: Args) => read<Row>({ name, text, values: parametersOf(query, args) })
    },
    prepareWrite<Args extends unknown[], Row>(build: (db: Db, ...args: Args) => Compilable<Row>) {
      const query = compileWithSlots(db, build)
      const { sql: text } = query.compiled
      return async (trx: Db, runs: readonly Args[]) => {
        const rows: Row[][] = []
        for (const args of runs) {
          rows.push(
            (await trx.executeQuery(CompiledQuery.raw(text, parametersOf(query, args)))).rows as Row[],
          )
        }
        return rows
      }
    },
    write: (work) => db.transaction().execute(work),
    ping: async () => {
      await sql`select 1`.execute(db)
    },
    close: () => db.destroy(),
  }
}

/** The pool as Kysely sees it, each checkout bounded by `timeoutMs` (see openPostgres). */
function withDeadlines(pool: pg.Pool, timeoutMs: number): PostgresPool {
  return {
    connect: async () => {
      const giveUpAt = Date.now() + timeoutMs
      const client = await withDeadline(pool.connect(), timeoutMs, 'a database connection')
      let broken: Error | undefined
      return {
        // Kysely sends (sql, parameters); the handle's reads a named statement (pg.QueryConfig).
        query: async (query: string | pg.QueryConfig, values?: unknown[]) => {
          if (broken) throw broken
          const left = Math.max(1, giveUpAt - Date.now())
          try {
            return await withDeadline(client.query(query, values), left, 'a database query')
          } catch (error) {
            if (error instanceof DatabaseTimeoutError) broken = error
            throw error
          }
        },
        // A connection whose query was given up on may still answer it: it goes, and the server's
        // statement_timeout ends the query (a transaction left open is rolled back when it goes).
        release: () => client.release(broken),
      } as unknown as PostgresPoolClient
    },
    end: () => pool.end(),
  }
}
