import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { createAttemptsRepository } from './attempts.repository.js'
import { createEndpointsRepository } from './endpoints.repository.js'
import { waitForFanOuts } from './fan-out.js'
import { SWEEP_GRACE_MS } from './sweep.js'

/**
 * Disables an endpoint in the caller's transaction, whoever asks (its owner, the operators, a 410, five
 * days of failures): the reason goes in its body (null when its owner disabled it), and its pending
 * attempts end as failed with that reason (ENDING_BATCH here when answered, else none, the rest by the
 * dispatchers: sweep.ts; none starts meanwhile); one in flight finishes and is not retried. False when there is
 * no such live endpoint. `answered`: a PATCH or an operator waits for it to answer (the dispatcher's own
 * disable, for a 410 or five days of failures, does not).
 */
export function createDisabler(handle: DbHandle, options: { answered: boolean }) {
  const endpoints = createEndpointsRepository(handle)
  const attempts = createAttemptsRepository(handle)
  return async (trx: Db, id: number, reason: string | null, now: number): Promise<boolean> => {
    // The endpoint's row first, then its attempts: the order a dispatcher's step takes them in.
    const updated = await endpoints.update(trx, id, {
      status: 'disabled',
      disabled_reason: reason,
      sweep_until: now + SWEEP_GRACE_MS,
    })
    if (!updated) return false
    // The dispatcher's own (a 410, five days of failures) ends none here: a step may disable many
    // endpoints, each with a backlog, and the sweep ends them all within a second (none starts meanwhile).
    if (!options.answered) return true
    // A disable that is answered promises that nothing starts after the answer: fan-outs in flight first.
    await waitForFanOuts(handle, trx)
    await attempts.failPending(trx, id, reason ?? 'the endpoint was disabled', now)
    return true
  }
}
