import type { Compilable, CompiledQuery } from 'kysely'
import type { Db } from './database.js'

interface Prepared<Row> {
  compiled: CompiledQuery<Row>
  /** For each SQL parameter: the index of the argument that fills it, or -1 for a constant. */
  slots: number[]
}

/** Runs a compiled read synchronously, or returns undefined when it must go through Kysely. */
type DirectRunner = (sql: string, parameters: readonly unknown[]) => unknown[] | undefined

const directRunners = new WeakMap<Db, DirectRunner>()

/**
 * Lets precompiled queries on `db` skip Kysely's executor (its connection mutex, plugins and promise
 * chain) when the driver can run them synchronously and safely: SQLite outside a transaction.
 */
export function registerDirectRunner(db: Db, run: DirectRunner): void {
  directRunners.set(db, run)
}

/**
 * A query built and compiled once per database handle (in that handle's dialect), then run with new
 * arguments: the hot paths skip Kysely's builder and compiler on every request. `build` must use each
 * argument only as a value; its shape must not depend on them (write one query per shape).
 *
 * @example const findName = precompiled((db, id: number) => db.selectFrom('pets').select('name').where('id', '=', id))
 */
export function precompiled<Args extends unknown[], Row>(build: (db: Db, ...args: Args) => Compilable<Row>) {
  const cache = new WeakMap<Db, Prepared<Row>>()
  return async (db: Db, ...args: Args): Promise<Row[]> => {
    let prepared = cache.get(db)
    if (!prepared) {
      // Marker objects in place of the arguments show where each one lands among the SQL parameters.
      const markers = args.map((_, index) => ({ argument: index }))
      const compiled = build(db, ...(markers as Args)).compile()
      prepared = {
        compiled,
        slots: compiled.parameters.map((value) => markers.indexOf(value as { argument: number })),
      }
      cache.set(db, prepared)
    }
    const { compiled, slots } = prepared
    const parameters = slots.map((slot, index) => (slot === -1 ? compiled.parameters[index] : args[slot]))
    const direct = directRunners.get(db)?.(compiled.sql, parameters) as Row[] | undefined
    return direct ?? (await db.executeQuery<Row>({ ...compiled, parameters })).rows
  }
}
