import { systemClock } from '../clock.js'
import { createDatabaseClock } from '../db/database-clock.js'
import type { DbHandle } from '../db/handle.js'
import { createEventsRepository } from '../events/events.repository.js'
import { COUNTED_UP_TO, type WebhookQueueProbe } from '../http/metrics.js'
import { createAttemptsRepository } from './attempts.repository.js'
import { createCircuitsRepository } from './circuits.repository.js'
import type { Dispatcher } from './dispatcher.port.js'

/** How long one read of the outbox serves its two gauges (both are read within one scrape). */
const OUTBOX_READ_MS = 1_000

/**
 * The webhook queue as the metrics show it: the database's outbox and queue, this instance's lanes. Due
 * times are the database's, so the attempts due are judged by its clock, not this host's.
 */
export function createQueueProbe(handle: DbHandle, dispatcher: Dispatcher): WebhookQueueProbe {
  const events = createEventsRepository(handle)
  const attempts = createAttemptsRepository(handle)
  const circuits = createCircuitsRepository(handle)
  const databaseClock = createDatabaseClock(handle, systemClock)
  let outbox: { readAt: number; read: ReturnType<WebhookQueueProbe['outbox']> } | undefined
  return {
    outbox: () => {
      const now = performance.now()
      if (outbox === undefined || now - outbox.readAt > OUTBOX_READ_MS)
        outbox = { readAt: now, read: events.outbox(COUNTED_UP_TO) }
      return outbox.read
    },
    due: async () => attempts.countDue(await databaseClock.now(), COUNTED_UP_TO),
    circuitOpen: () => circuits.countCircuitOpen(),
    inFlightByAccount: () => dispatcher.inFlightByAccount(),
  }
}
