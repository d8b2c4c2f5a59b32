import type { Clock } from '../clock.js'
import type { DbHandle } from '../db/handle.js'
import { createAttemptsRepository, ENDING_BATCH } from './attempts.repository.js'
import { endingReason } from './ended-endpoints.js'
import { createEndingsRepository } from './endings.repository.js'

/** How often a dispatcher looks for endpoints ended with attempts still pending (while it finds none). */
export const SWEEP_EVERY_MS = 1_000
/** Ended endpoints one look reads at most. */
const SWEEP_ENDPOINTS = 100
/**
 * How long an ended endpoint stays marked for the sweep with nothing pending: on PostgreSQL a fan-out in
 * flight when the dispatcher disabled it (a 410, five days of failures) may still commit an attempt for
 * it, and no transaction outlives the database deadline (2 s by default) by this much.
 */
export const SWEEP_GRACE_MS = 60_000

/** What a sweep did: nothing, some, or a whole batch (more may be left: the next step sweeps again). */
export type Swept = 'none' | 'some' | 'more'

/**
 * The pending attempts of endpoints deleted or disabled, ended as failed with why, ENDING_BATCH a
 * transaction. Only endpoints an ending marked are read (`sweep_until`), and let go of SWEEP_GRACE_MS
 * after it once none is pending: the deleted stay in the table for good. An ending (a DELETE, a disable,
 * a 410, five days of failures) ends that many in its own transaction (attempts.repository.ts
 * `failPending`), so that none grows with a backlog (a hung
 * endpoint's may hold days of events); the dispatchers end the rest here. None of them is sent meanwhile:
 * nobody leases an ended endpoint, and a start first reads the endpoint enabled and live (`targetIfOwn`).
 */
export function createSweep(handle: DbHandle, clock: Clock) {
  const endings = createEndingsRepository(handle)
  const attempts = createAttemptsRepository(handle)
  let lookedAt = Number.NEGATIVE_INFINITY

  return async function sweep(): Promise<Swept> {
    // An interval of this process: on the wall clock, one set back would hold the sweep up as long.
    const at = clock.monotonic()
    if (at - lookedAt < SWEEP_EVERY_MS) return 'none'
    lookedAt = at
    const now = clock.now()
    const ended = await endings.endedWithPending(SWEEP_ENDPOINTS)
    if (ended.length === 0) {
      const done = await endings.sweptOut(now, SWEEP_ENDPOINTS)
      if (done.length > 0) await handle.write((trx) => endings.letGo(trx, done, now))
      return 'none'
    }
    const count = await handle.write(async (trx) => {
      let left = ENDING_BATCH
      // Locked first, as a step or a re-enable does, and read again: one re-enabled since the read above
      // takes deliveries again, and what is pending for it now was written after its re-enable.
      const stillEnded = await endings.lockEndedIn(
        trx,
        ended.map((row) => row.id),
      )
      for (const row of stillEnded) {
        const reason = endingReason(row) ?? 'the endpoint was disabled'
        left -= await attempts.failPending(trx, row.id, reason, now, left)
        if (left === 0) break
      }
      return ENDING_BATCH - left
    })
    if (count < ENDING_BATCH) return count === 0 ? 'none' : 'some'
    lookedAt = Number.NEGATIVE_INFINITY
    return 'more'
  }
}
