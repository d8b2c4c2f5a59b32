import { sql } from 'kysely'
import type { Clock } from '../clock.js'
import type { Db } from './database.js'
import type { DbHandle } from './handle.js'

/**
 * The database's time in ms since the epoch, read in `trx`: the one clock that leases and due times of
 * every instance are measured by, whatever each host's clock says. SQLite runs in this process, on this
 * host: its clock is this process's `clock` (the tests' fake one moves due times and leases too).
 */
export async function databaseNow(handle: Pick<DbHandle, 'dialect'>, trx: Db, clock: Clock): Promise<number> {
  if (handle.dialect === 'sqlite') return clock.now()
  const { rows } = await sql<{ now: string | number }>`
    select floor(extract(epoch from clock_timestamp()) * 1000)::bigint as now`.execute(trx)
  return Number(rows[0]?.now)
}
