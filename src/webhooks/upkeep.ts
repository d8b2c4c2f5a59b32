import type { Clock } from '../clock.js'
import type { DbHandle } from '../db/handle.js'
import { publishEvents } from '../events/events.publisher.js'
import { createEventsRepository } from '../events/events.repository.js'
import { createEndpointsRepository } from './endpoints.repository.js'
import { createSweep } from './sweep.js'

/**
 * What a dispatcher's step does before its plan, each in a bounded transaction of its own: what committed
 * since numbered (PostgreSQL: `publishEvents`, PUBLISH_BOUND a transaction; with no endpoint enabled,
 * written already fanned out), then the attempts of ended endpoints ended (`sweep.ts`, ENDING_BATCH a
 * transaction). `busy` when it did anything; `more` when a bound left some for the next step, at once.
 */
export function createUpkeep(handle: DbHandle, clock: Clock) {
  const events = createEventsRepository(handle)
  const endpoints = createEndpointsRepository(handle)
  const sweep = createSweep(handle, clock)

  async function publish(): Promise<boolean> {
    if (!(await events.anyUnpublished())) return false
    return (await handle.write((trx) => publishEvents(handle, trx, endpoints.anyEnabledIn))).more
  }

  return async (): Promise<{ busy: boolean; more: boolean }> => {
    const unpublished = await publish()
    const swept = await sweep()
    return { busy: unpublished || swept !== 'none', more: unpublished || swept === 'more' }
  }
}
