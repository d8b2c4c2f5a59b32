import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import type { AttemptOutcome } from './attempt.js'
import { type ClaimedAttempt, createAttemptsRepository } from './attempts.repository.js'
import { createDisabler } from './disable.js'
import { createEndpointsRepository } from './endpoints.repository.js'
import { FAILING_DISABLES_AFTER_MS, retryDelayMs } from './schedule.js'

/** How an attempt ended for the metrics: delivered, to be tried again, or given up. */
export type Settled = 'succeeded' | 'retried' | 'failed' | 'lost'

/**
 * Writes down what came of attempts, in the dispatcher's transaction: the attempt's row (only while this
 * dispatcher still holds its lease), then the series' next step: nothing after a success, the next attempt
 * on the schedule after a failure, or the endpoint disabled (a 410, five days of failures).
 */
export function createSettler(handle: DbHandle, options: { retryScale: number }) {
  const attempts = createAttemptsRepository(handle)
  const endpoints = createEndpointsRepository(handle)
  const disable = createDisabler(handle)

  async function afterFailure(trx: Db, claimed: ClaimedAttempt, outcome: AttemptOutcome, now: number) {
    const endpointId = claimed.endpoint.id
    if (outcome.httpStatus === 410) {
      await disable(trx, endpointId, 'the endpoint answered 410 Gone', now)
      return 'failed'
    }
    const endpoint = await trx
      .selectFrom('webhook_endpoints')
      .select(['status', 'deleted_at', 'failing_since'])
      .where('id', '=', endpointId)
      .executeTakeFirst()
    if (endpoint?.status !== 'enabled' || endpoint.deleted_at !== null) return 'failed'
    const failingSince = endpoint.failing_since ?? outcome.startedAt
    if (endpoint.failing_since === null)
      await endpoints.update(trx, endpointId, { failing_since: failingSince })
    if (now - failingSince >= FAILING_DISABLES_AFTER_MS * options.retryScale) {
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
    async settle(
      trx: Db,
      claimed: ClaimedAttempt,
      outcome: AttemptOutcome,
      leaseToken: string,
      now: number,
    ): Promise<Settled> {
      const recorded = await attempts.record(trx, { id: claimed.id, leaseToken, ...outcome })
      if (!recorded) return 'lost'
      if (outcome.error !== null) return afterFailure(trx, claimed, outcome, now)
      // A success ends the endpoint's failing streak (whoever started it, whenever).
      await trx
        .updateTable('webhook_endpoints')
        .set({ failing_since: null })
        .where('id', '=', claimed.endpoint.id)
        .where('failing_since', 'is not', null)
        .execute()
      return 'succeeded'
    },
  }
}
