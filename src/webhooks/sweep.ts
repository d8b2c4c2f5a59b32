import type { Clock } from '../clock.js'
import type { DbHandle } from '../db/handle.js'
import { createAttemptsRepository, ENDING_BATCH } from './attempts.repository.js'
import { endingReason } from './ended-endpoints.js'
import { createEndpointsRepository } from './endpoints.repository.js'

/** How often a dispatcher looks for endpoints ended with attempts still pending (while it finds none). */
export const SWEEP_EVERY_MS = 1_000
/** Ended endpoints one look reads at most. */
const SWEEP_ENDPOINTS = 100

/** What a sweep did: nothing, some, or a whole batch (more may be left: the next step sweeps again). */
export type Swept = 'none' | 'some' | 'more'

/**
 * The pending attempts of endpoints deleted or disabled, ended as failed with why, ENDING_BATCH a
 * transaction. An ending (a DELETE, a disable, a 410, five days of failures) ends that many in its own
 * transaction (attempts.repository.ts `failPending`), so that none grows with a backlog (a hung
 * endpoint's may hold days of events); the dispatchers end the rest here. None of them is sent meanwhile:
 * nobody leases an ended endpoint, and a start first reads the endpoint enabled and live (`isStillOwn`).
 */
export function createSweep(handle: DbHandle, clock: Clock) {
  const endpoints = createEndpointsRepository(handle)
  const attempts = createAttemptsRepository(handle)
  let lookedAt = Number.NEGATIVE_INFINITY

  return async function sweep(): Promise<Swept> {
    const now = clock.now()
    if (now - lookedAt < SWEEP_EVERY_MS) return 'none'
    lookedAt = now
    const ended = await endpoints.endedWithPending(SWEEP_ENDPOINTS)
    if (ended.length === 0) return 'none'
    const count = await handle.write(async (trx) => {
      let left = ENDING_BATCH
      // Locked first, as a step or a re-enable does, and read again: one re-enabled since the read above
      // takes deliveries again, and what is pending for it now was written after its re-enable.
      const stillEnded = await endpoints.lockEndedIn(
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
