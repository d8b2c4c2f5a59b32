import { CompiledQuery, type KyselyPlugin, type QueryId, type RootOperationNode, sql } from 'kysely'
import type { Db } from '../src/db/database.js'
import { compileWithSlots, type DbHandle } from '../src/db/handle.js'

/**
 * A handle that records every statement run through it (its transactions' and its prepared ones), and
 * the plans of what it recorded, in the order they ran. Subqueries are not statements of their own: only
 * queries that ran (a result came back) are kept. A prepared statement's arguments are explained as 1.
 */
export function recordingHandle(handle: DbHandle) {
  const built = new Map<QueryId, RootOperationNode>()
  const ran: CompiledQuery[] = []
  const capture: KyselyPlugin = {
    transformQuery: (args) => {
      built.set(args.queryId, args.node)
      return args.node
    },
    transformResult: async (args) => {
      const node = built.get(args.queryId)
      if (node) ran.push(handle.db.getExecutor().compileQuery(node, args.queryId))
      return args.result
    },
  }
  /** A prepared statement's text, its arguments as 1, kept each time it runs. */
  const explained = (build: (db: Db, ...args: never[]) => { compile(): CompiledQuery }) => {
    const { compiled, slots } = compileWithSlots(handle.db, build)
    const values = slots.map((slot, i) => (slot === -1 ? compiled.parameters[i] : 1))
    return CompiledQuery.raw(compiled.sql, values)
  }
  const recording: DbHandle = {
    ...handle,
    db: handle.db.withPlugin(capture),
    write: (work) => handle.write((trx) => work(trx.withPlugin(capture) as Db)),
    prepareRead(build) {
      const run = handle.prepareRead(build)
      const query = explained(build as never)
      return (...args) => {
        ran.push(query)
        return run(...args)
      }
    },
    prepareWrite(build) {
      const run = handle.prepareWrite(build)
      const query = explained(build as never)
      return (trx, runs) => {
        if (runs.length > 0) ran.push(query)
        return run(trx, runs)
      }
    },
  }
  return {
    handle: recording,
    /** The plans of every statement recorded, one text each (PostgreSQL: sequential scans priced out). */
    plans: () => plansOf(handle, ran),
  }
}

/**
 * The plans of `queries`, explained in one transaction. On PostgreSQL sequential scans are priced out
 * first: a tiny table is otherwise scanned whatever its indexes, and the question is whether an index
 * serves the statement.
 */
export async function plansOf(handle: DbHandle, queries: readonly CompiledQuery[]): Promise<string[]> {
  return handle.write(async (trx) => {
    const postgres = handle.dialect === 'postgres'
    if (postgres) await sql`set local enable_seqscan = off`.execute(trx)
    const plans: string[] = []
    for (const query of queries) {
      const explain = CompiledQuery.raw(`${postgres ? 'explain' : 'explain query plan'} ${query.sql}`, [
        ...query.parameters,
      ])
      const { rows } = await trx.executeQuery<Record<string, string>>(explain)
      plans.push(rows.map((row) => row.detail ?? row['QUERY PLAN']).join('\n'))
    }
    return plans
  })
}
