import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { type AttemptOutcome, type ClaimedAttempt, createAttemptsRepository } from './attempts.repository.js'
import { createDisabler } from './disable.js'
import { createEndpointsRepository } from './endpoints.repository.js'
import { FAILING_DISABLES_AFTER_MS, retryDelayMs } from './schedule.js'

/** How an attempt ended for the metrics: delivered, to be tried again, or given up. */
export type Settled = 'succeeded' | 'retried' | 'failed' | 'lost'

/**
 * Writes down what came of attempts, in the dispatcher's transaction: the attempt's row (only while this
 * dispatcher still holds it), then the series' next step: nothing after a success, the next attempt on
 * the schedule after a failure, or the endpoint disabled (a 410, five days of failures). Each outcome
 * also moves the endpoint's failing streak (`failing_since`, `failures_in_row`: its circuit).
 */
export function createSettler(handle: DbHandle, options: { retryScale: number }) {
  const attempts = createAttemptsRepository(handle)
  const disable = createDisabler(handle, { answered: false })
  const endpoints = createEndpointsRepository(handle)

  async function afterFailure(trx: Db, claimed: ClaimedAttempt, outcome: AttemptOutcome, now: number) {
    const endpointId = claimed.endpoint.id
    if (outcome.httpStatus === 410) {
      await disable(trx, endpointId, 'the endpoint answered 410 Gone', now)
      return 'failed'
    }
    const endpoint = await endpoints.countFailure(trx, endpointId, outcome.startedAt)
    if (endpoint?.status !== 'enabled' || endpoint.deleted_at !== null) return 'failed'
    if (now - (endpoint.failing_since ?? now) >= FAILING_DISABLES_AFTER_MS * options.retryScale) {
      await disable(trx, endpointId, 'every delivery to it failed for 5 days', now)
      return 'failed'
    }
    const delay = retryDelayMs(claimed.attempt, {
      scale: options.retryScale,
      retryAfterMs: outcome.retryAfterMs,
    })
    if (delay === undefined) return 'failed'
    const next = { eventSeq: claimed.event.seq, endpointId, attempt: claimed.attempt + 1, dueAt: now + delay }
    await attempts.schedule(trx, [{ ...next, redelivery: claimed.redelivery }])
    return 'retried'
  }

  return {
    /**
     * Writes down attempts that ended (all `owner`'s), in order; how each one counts for the metrics. A
     * success ends its endpoint's failing streak and closes its circuit (once per endpoint).
     */
    async settleAll(
      trx: Db,
      ended: readonly { claimed: ClaimedAttempt; outcome: AttemptOutcome }[],
      owner: string,
      now: number,
    ): Promise<Settled[]> {
      const written = await attempts.writeOutcomes(
        trx,
        owner,
        ended.map(({ claimed, outcome }) => ({ id: claimed.id, outcome })),
      )
      const settled: Settled[] = []
      const succeeded = new Set<number>()
      for (const { claimed, outcome } of ended) {
        if (!written.has(claimed.id)) settled.push('lost')
        else if (outcome.error !== null) settled.push(await afterFailure(trx, claimed, outcome, now))
        else {
          succeeded.add(claimed.endpoint.id)
          settled.push('succeeded')
        }
      }
      await endpoints.closeCircuits(trx, [...succeeded])
      return settled
    },
  }
}
