import type { DbHandle } from '../db/handle.js'
import { createEventsRepository } from '../events/events.repository.js'
import { createAttemptsRepository } from './attempts.repository.js'
import { RETENTION_MS } from './event-log.js'
import { createFanOut } from './fan-out.js'

/** Rows deleted per transaction, so a purge never holds the database long. */
export const PURGE_BATCH = 1_000
/** Batches per table and run (every 10 minutes): 50,000 rows, far above what a day adds at normal load. */
const MAX_BATCHES = 50

/**
 * Deletes events and attempts older than 30 days (CONTRACT §14), in bounded batches, and the earlier
 * subscriptions no waiting event needs.
 */
export function createWebhookRetention(handle: DbHandle) {
  const fanOut = createFanOut(handle)
  const purges = [createAttemptsRepository(handle).purge, createEventsRepository(handle).purge]
  return async (now: number): Promise<void> => {
    await handle.write((trx) => fanOut.pruneSubscriptions(trx))
    const before = now - RETENTION_MS
    for (const purge of purges) {
      for (let batch = 0; batch < MAX_BATCHES; batch++) {
        if ((await handle.write((trx) => purge(trx, before, PURGE_BATCH))) < PURGE_BATCH) break
      }
    }
  }
}
