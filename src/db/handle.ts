import type { Compilable, CompiledQuery } from 'kysely'
import type { Db } from './database.js'

/**
 * A value that changes whenever anyone (this process included) commits to the database, read after the
 * call (synchronously on SQLite; on PostgreSQL by a query sent after the call).
 */
export type ChangeToken = () => unknown

/** A read compiled once, run with new arguments: `(...args) => rows`, synchronously where the driver can. */
export type PreparedRead<Args extends unknown[], Row> = (...args: Args) => Row[] | Promise<Row[]>

/**
 * A statement compiled once, run in a write's transaction once per argument list: `(trx, runs) => rows of
 * each run` (its RETURNING's; none without one).
 */
export type PreparedWrite<Args extends unknown[], Row> = (
  trx: Db,
  runs: readonly Args[],
) => Row[][] | Promise<Row[][]>

/**
 * Everything a repository needs from the database, built once in deps.ts. SQLite and PostgreSQL both
 * give one; repositories never know which.
 */
export interface DbHandle {
  /**
   * Which SQL the database speaks, for the few statements that must differ (inventory.repository.ts's
   * fold); everything else is Kysely's and the same on both.
   */
  readonly dialect: 'sqlite' | 'postgres'
  /** Kysely: writes, transactions, migrations and the CLI's reads. */
  readonly db: Db
  /**
   * The one read path of the hot queries: `build` runs once, with marker arguments, and its SQL is
   * compiled in this database's dialect; each call then runs that SQL with its own arguments. Reads see
   * committed data only, never another request's open transaction.
   */
  prepareRead<Args extends unknown[], Row>(
    build: (db: Db, ...args: Args) => Compilable<Row>,
  ): PreparedRead<Args, Row>
  /**
   * A statement of the write path compiled once in the same way, run in `write`'s transaction (`trx`)
   * once for each argument list: on SQLite in place on the writing connection, synchronously (no query
   * built, no promise: one-row statements run in a loop cost SQLite a quarter of one statement of many
   * rows), traced as one span with the number of runs; on PostgreSQL sent on `trx`, one round trip each
   * (there one statement of many rows is the cheap form).
   */
  prepareWrite<Args extends unknown[], Row>(
    build: (db: Db, ...args: Args) => Compilable<Row>,
  ): PreparedWrite<Args, Row>
  /**
   * Present when the database can tell cheaply that nothing changed: SQLite's `data_version`, read on the
   * connection that serves the reads, so this process's commits change it too; PostgreSQL's current
   * snapshot, one query shared by the requests of a turn of the event loop (postgres.ts). Caches may keep
   * a read's result only while the token read *before* that read is still current.
   */
  readonly changeToken: ChangeToken | undefined
  /**
   * The one write path: `work` in one transaction, within the deadline (PETSTORE_DB_TIMEOUT_MS), else a
   * DatabaseTimeoutError (db/deadline.ts). On SQLite a locked database is retried on timers until then.
   */
  write<T>(work: (trx: Db) => Promise<T>): Promise<T>
  /** Resolves when the database answers a trivial query (for /readyz). */
  ping(): Promise<void>
  close(): Promise<void>
}

/** A compiled query and, for each of its SQL parameters, the argument that fills it (-1: a constant). */
export interface CompiledWithSlots<Row> {
  compiled: CompiledQuery<Row>
  slots: number[]
}

/**
 * Compiles `build` once: marker objects stand in for the arguments and show where each one lands among
 * the SQL parameters. `build` must use each argument only as a value (its shape must not depend on them).
 */
export function compileWithSlots<Args extends unknown[], Row>(
  db: Db,
  build: (db: Db, ...args: Args) => Compilable<Row>,
): CompiledWithSlots<Row> {
  const markers = Array.from({ length: build.length - 1 }, (_, index) => ({ argument: index }))
  const compiled = build(db, ...(markers as unknown as Args)).compile()
  const slots = compiled.parameters.map((value) => markers.indexOf(value as { argument: number }))
  return { compiled, slots }
}

/** The SQL parameters of one call: each slot's argument, or the compiled constant. */
export function parametersOf(query: CompiledWithSlots<unknown>, args: readonly unknown[]): unknown[] {
  const { compiled, slots } = query
  return slots.map((slot, index) => (slot === -1 ? compiled.parameters[index] : args[slot]))
}
