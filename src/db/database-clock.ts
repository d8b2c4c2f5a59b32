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

/**
 * The database's time, estimated between reads from this process's monotonic clock: for the reads that
 * decide whether a transaction is worth starting (is an attempt due, a lease lapsed), which must judge by
 * the clock the transaction will, however far this host's clock is off. The offset is learnt from every
 * transaction that read the database's time (`learn`), and read afresh when older than `refreshMs`. It is
 * an offset to the monotonic clock, not the wall clock: one set back by a minute made the estimate a
 * minute late until a step's write learnt it again, and held its refresh off for as long.
 */
export function createDatabaseClock(handle: DbHandle, clock: Clock, refreshMs = 10_000) {
  let offset = 0
  let learntAt = Number.NEGATIVE_INFINITY
  /** `databaseMs` was read by a query sent at `sentAt` (`clock.monotonic()`): the middle of its round trip. */
  const learn = (databaseMs: number, sentAt: number): void => {
    learntAt = clock.monotonic()
    offset = databaseMs - (sentAt + learntAt) / 2
  }
  return {
    learn,
    /** Whole milliseconds, as the stored times it is compared with. */
    async now(): Promise<number> {
      if (handle.dialect === 'sqlite') return clock.now()
      const sentAt = clock.monotonic()
      if (sentAt - learntAt >= refreshMs) learn(await databaseNow(handle, handle.db, clock), sentAt)
      return Math.round(clock.monotonic() + offset)
    },
  }
}
