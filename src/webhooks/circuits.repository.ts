import { sql } from 'kysely'
import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { ENABLED, type EndpointRow } from './endpoints.repository.js'
import { CIRCUIT_OPENS_AFTER } from './schedule.js'

/** Failed attempts of one endpoint that a step writes down, the first of them started at `since`. */
export interface FailureCount {
  endpointId: number
  failures: number
  since: number
}

/** An endpoint as its failures left it: whether it still takes deliveries, and since when it fails. */
export type Streak = Pick<EndpointRow, 'id' | 'status' | 'deleted_at' | 'failing_since'>

/**
 * The SQL for webhook endpoints' failing streaks (`failures_in_row`, `failing_since`): the circuit that the
 * dispatcher opens after failures in a row and closes after a success.
 */
export function createCircuitsRepository(handle: DbHandle) {
  const circuitOpen = handle.prepareRead((db, threshold: number) =>
    db
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('status', '=', ENABLED)
      .where('deleted_at', 'is', null)
      .where('failures_in_row', '>=', threshold),
  )
  // SQLite's form of countFailures: one compiled statement run per endpoint (src/db/README.md).
  const countOne = handle.prepareWrite((db, failures: number, since: number, id: number) =>
    db
      .updateTable('webhook_endpoints')
      .set((eb) => ({
        failures_in_row: eb('failures_in_row', '+', failures),
        failing_since: eb.fn.coalesce('failing_since', eb.val(since)),
      }))
      .where('id', '=', id)
      .returning(['id', 'status', 'deleted_at', 'failing_since']),
  )

  /** PostgreSQL's: one statement for every endpoint (a step's are a few thousand at most). */
  async function countAll(trx: Db, counts: readonly FailureCount[]): Promise<Streak[]> {
    const rows = counts.map(
      ({ endpointId, failures, since }) =>
        sql`(cast(${endpointId} as bigint), cast(${failures} as integer), cast(${since} as bigint))`,
    )
    const { rows: streaks } = await sql<Streak>`
      with v(id, failures, since) as (values ${sql.join(rows)})
      update webhook_endpoints set failures_in_row = webhook_endpoints.failures_in_row + v.failures,
        failing_since = coalesce(webhook_endpoints.failing_since, v.since)
      from v where webhook_endpoints.id = v.id
      returning webhook_endpoints.id, webhook_endpoints.status, webhook_endpoints.deleted_at,
        webhook_endpoints.failing_since`.execute(trx)
    return streaks
  }

  return {
    /**
     * After failed attempts: each endpoint's streak grows by its failures, and starts at the first of them
     * if it had not started (on SQLite one compiled statement run per endpoint, on PostgreSQL one
     * statement); each endpoint as it is then, by id.
     */
    async countFailures(trx: Db, counts: readonly FailureCount[]): Promise<Map<number, Streak>> {
      if (counts.length === 0) return new Map()
      const streaks =
        handle.dialect === 'sqlite'
          ? (
              await countOne(
                trx,
                counts.map((count) => [count.failures, count.since, count.endpointId]),
              )
            ).flat()
          : await countAll(trx, counts)
      return new Map(streaks.map((streak) => [Number(streak.id), streak]))
    },
    /** After a success of each: the failing streak ends and the circuit closes (one statement). */
    async closeCircuits(trx: Db, ids: readonly number[]): Promise<void> {
      if (ids.length === 0) return
      await trx
        .updateTable('webhook_endpoints')
        .set({ failing_since: null, failures_in_row: 0 })
        .where('id', 'in', [...ids])
        .where((eb) => eb.or([eb('failing_since', 'is not', null), eb('failures_in_row', '>', 0)]))
        .execute()
    },
    /** Enabled endpoints whose circuit is open (a metric). */
    async countCircuitOpen(): Promise<number> {
      const [row] = await circuitOpen(CIRCUIT_OPENS_AFTER)
      return Number(row?.count ?? 0)
    },
  }
}
