import type { DbHandle } from '../db/handle.js'
import { createEventsRepository } from '../events/events.repository.js'
import type { WebhookQueueProbe } from '../http/metrics.js'
import { createAttemptsRepository } from './attempts.repository.js'
import { createCircuitsRepository } from './circuits.repository.js'
import type { Dispatcher } from './dispatcher.port.js'

/** The webhook queue as the metrics show it: the database's outbox and queue, this instance's lanes. */
export function createQueueProbe(handle: DbHandle, dispatcher: Dispatcher): WebhookQueueProbe {
  const events = createEventsRepository(handle)
  const attempts = createAttemptsRepository(handle)
  const circuits = createCircuitsRepository(handle)
  return {
    outbox: () => events.outbox(),
    due: () => attempts.countDue(Date.now()),
    circuitOpen: () => circuits.countCircuitOpen(),
    inFlightByAccount: () => dispatcher.inFlightByAccount(),
  }
}
