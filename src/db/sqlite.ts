import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import SQLite from 'better-sqlite3'
import { type Compilable, Kysely } from 'kysely'
import { createBoundedMap } from '../bounded-map.js'
import { tracingEnabled } from '../tracing/tracing.js'
import type { Db } from './database.js'
import { retryWhileBusy } from './deadline.js'
import { type CompiledWithSlots, compileWithSlots, type DbHandle, parametersOf } from './handle.js'
import { querySpans, tracedSync } from './query-spans.js'
import { ImmediateSqliteDialect } from './sqlite-dialect.js'

export interface SqliteOptions {
  /**
   * How long a write waits for another connection's lock (retrying on timers) before it gets 503.
   * Unset (migrations, start-up): SQLite's own busy wait of 5 s, which blocks the thread.
   */
  timeoutMs?: number | undefined
}

/** A read waits at most this long, synchronously, for a lock (in WAL mode only a recovery takes one). */
export const READ_BUSY_TIMEOUT_MS = 20

/** Most distinct SQL texts kept prepared; queries are parameterised, so the real set is small. */
const STATEMENT_CACHE_SIZE = 200

/**
 * SQLite in WAL mode with synchronous=FULL (a 201 is only sent once the pet is on disk), on two
 * connections: Kysely writes on one; the prepared reads run on the other, synchronously, so they see
 * only committed data and never wait behind a transaction that Kysely holds open across awaits. The
 * change token is that reading connection's `data_version`, which moves on every commit of any other
 * connection: this process's writer, another process, an operator's shell.
 */
export function openSqlite(path: string, options: SqliteOptions = {}): DbHandle {
  const { timeoutMs } = options
  const writer = openFile(path)
  writer.pragma('journal_mode = WAL')
  writer.pragma('synchronous = FULL')
  writer.pragma('foreign_keys = ON')
  // With a deadline, a locked write fails at once and write() tries again on a timer: SQLite's own
  // busy wait sleeps on the thread, and every other request of the process waited behind it.
  writer.pragma(`busy_timeout = ${timeoutMs === undefined ? 5000 : 0}`)
  const reader = openFile(path)
  reader.pragma('query_only = ON')
  reader.pragma(`busy_timeout = ${timeoutMs === undefined ? 5000 : READ_BUSY_TIMEOUT_MS}`)
  // Reads through a memory map and a 16 MiB page cache instead of a read() per page.
  reader.pragma('mmap_size = 268435456')
  reader.pragma('cache_size = -16384')
  const changeToken = createChangeToken(reader.prepare('PRAGMA data_version').pluck())
  const db: Db = new Kysely({
    dialect: new ImmediateSqliteDialect({ database: withStatementCache(writer) }),
    log: querySpans('sqlite'),
  })
  const ping = reader.prepare('select 1')
  const transaction = <T>(work: (trx: Db) => Promise<T>) => db.transaction().execute(work)

  return {
    dialect: 'sqlite',
    db,
    changeToken,
    write: (work) =>
      timeoutMs === undefined
        ? transaction(work)
        : retryWhileBusy(() => transaction(work), timeoutMs, 'the write'),
    ping: async () => {
      ping.get()
    },
    prepareRead<Args extends unknown[], Row>(build: (db: Db, ...args: Args) => Compilable<Row>) {
      const query = compileWithSlots(db, build)
      const run = preparedOn<Row>(reader, query)
      if (!tracingEnabled()) return (...args: Args) => run(args)
      const { sql } = query.compiled
      return (...args: Args) => tracedSync('sqlite', sql, () => run(args))
    },
    prepareWrite<Args extends unknown[], Row>(build: (db: Db, ...args: Args) => Compilable<Row>) {
      const query = compileWithSlots(db, build)
      const run = preparedOn<Row>(writer, query)
      const runAll = (runs: readonly Args[]) => {
        // On the connection Kysely's transaction holds: outside one it would join whichever is open.
        if (!writer.inTransaction) throw new Error('a prepared write runs inside write()')
        return runs.map(run)
      }
      if (!tracingEnabled()) return (_trx: Db, runs: readonly Args[]) => runAll(runs)
      const { sql } = query.compiled
      return (_trx: Db, runs: readonly Args[]) => tracedSync('sqlite', sql, () => runAll(runs), runs.length)
    },
    close: async () => {
      await db.destroy()
      reader.close()
    },
  }
}

/**
 * `PRAGMA data_version`, read at most once per turn of the event loop. Reading it takes the WAL's shared
 * locks (system calls, about 2 µs), and a request asks twice (its key, then its page). Reusing it until
 * the microtask queue drains is exact: every request handled in this turn arrived before the turn began,
 * so the token, read in the turn, is read after its arrival; a commit later in the turn is concurrent with
 * those requests, and the next turn reads a new token.
 */
function createChangeToken(dataVersion: SQLite.Statement): () => unknown {
  let value: unknown
  let fresh = false
  const expire = () => {
    fresh = false
  }
  return () => {
    if (!fresh) {
      value = dataVersion.get()
      fresh = true
      queueMicrotask(expire)
    }
    return value
  }
}

/**
 * `query` on `connection`, prepared on first use (the schema exists by then: migrations run after the
 * handle opens); its rows, or none for a statement that returns none.
 */
function preparedOn<Row>(
  connection: SQLite.Database,
  query: CompiledWithSlots<Row>,
): (args: readonly unknown[]) => Row[] {
  let statement: SQLite.Statement<unknown[], unknown[]> | undefined
  let columns: string[] = []
  return (args) => {
    if (!statement) {
      statement = connection.prepare<unknown[], unknown[]>(query.compiled.sql)
      if (statement.reader) {
        columns = statement.columns().map((column) => column.name)
        // Rows come as arrays (better-sqlite3 builds them about a third faster than objects).
        statement.raw(true)
      }
    }
    const parameters = parametersOf(query, args)
    if (!statement.reader) {
      statement.run(parameters)
      return []
    }
    return statement.all(parameters).map((values) => toRow<Row>(columns, values))
  }
}

function toRow<Row>(columns: readonly string[], values: readonly unknown[]): Row {
  const row: Record<string, unknown> = {}
  for (let index = 0; index < columns.length; index++) row[columns[index] as string] = values[index]
  return row as Row
}

/** The folder of the default DATABASE_URL (`sqlite:./data/petstore.sqlite`): the only one created. */
const DEFAULT_FOLDER = 'data'

/**
 * The file, created if need be in a folder that exists (CONTRACT §1: a missing folder is an error, not a
 * tree made on the spot; `./data`, the default's, is the one exception). A failure carries its cause in
 * words' reach: ENOENT for a missing folder, EACCES when the folder cannot be written.
 */
function openFile(path: string): SQLite.Database {
  const folder = dirname(path)
  try {
    statSync(folder)
  } catch (error) {
    // ENOENT (no such directory) unless it is ./data; EACCES when a folder above may not be searched.
    const missing = (error as { code?: unknown }).code === 'ENOENT'
    if (!missing || resolve(folder) !== resolve(DEFAULT_FOLDER)) throw error
    mkdirSync(folder, { recursive: true })
  }
  try {
    return new SQLite(path)
  } catch (error) {
    // SQLite says only "unable to open database file": the folder's permissions tell why, when they do.
    if (!existsSync(path) && !isWritable(folder)) throw Object.assign(error as Error, { code: 'EACCES' })
    throw error
  }
}

function isWritable(folder: string): boolean {
  try {
    accessSync(folder, constants.W_OK)
    return true
  } catch {
    return false
  }
}

/**
 * What Kysely's SQLite driver runs its queries on. Each SQL text is prepared once (statements run to
 * completion synchronously, so sharing one is safe). A `ROLLBACK` with no transaction open is a no-op:
 * on a full disk or an I/O error SQLite rolls the transaction back by itself, and Kysely's own ROLLBACK
 * would then fail and replace the error that says why (SQLITE_FULL, a 503) with one that does not (a 500).
 */
function withStatementCache(sqlite: SQLite.Database) {
  const statements = createBoundedMap<string, SQLite.Statement>(STATEMENT_CACHE_SIZE)
  const alreadyRolledBack = { reader: false, run: () => ({ changes: 0, lastInsertRowid: 0 }) }
  return {
    close: () => sqlite.close(),
    prepare: (sql: string) => {
      if (sql === 'rollback' && !sqlite.inTransaction) return alreadyRolledBack as unknown as SQLite.Statement
      return statements.get(sql) ?? statements.set(sql, sqlite.prepare(sql))
    },
  }
}
