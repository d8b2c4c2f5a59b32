import type { Db } from '../db/database.js'
import { type DbHandle, prepareStatement } from '../db/handle.js'
import { type AttemptOutcome, type ClaimedAttempt, createAttemptsRepository } from './attempts.repository.js'
import { createDisabler } from './disable.js'
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
  const disable = createDisabler(handle)

  async function afterFailure(trx: Db, claimed: ClaimedAttempt, outcome: AttemptOutcome, now: number) {
    const endpointId = claimed.endpoint.id
    if (outcome.httpStatus === 410) {
      await disable(trx, endpointId, 'the endpoint answered 410 Gone', now)
      return 'failed'
    }
    const endpoint = await trx
      .updateTable('webhook_endpoints')
      .set((eb) => ({
        failures_in_row: eb('failures_in_row', '+', 1),
        failing_since: eb.fn.coalesce('failing_since', eb.val(outcome.startedAt)),
      }))
      .where('id', '=', endpointId)
      .returning(['status', 'deleted_at', 'failing_since'])
      .executeTakeFirst()
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

  const closeCircuit = prepareStatement(handle.db, (db, id: number) =>
    db
      .updateTable('webhook_endpoints')
      .set({ failing_since: null, failures_in_row: 0 })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('failing_since', 'is not', null), eb('failures_in_row', '>', 0)])),
  )

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
      const settled: Settled[] = []
      const succeeded = new Set<number>()
      for (const { claimed, outcome } of ended) {
        if (!(await attempts.record(trx, claimed.id, owner, outcome))) settled.push('lost')
        else if (outcome.error !== null) settled.push(await afterFailure(trx, claimed, outcome, now))
        else {
          succeeded.add(claimed.endpoint.id)
          settled.push('succeeded')
        }
      }
      for (const id of succeeded) await closeCircuit(trx, id)
      return settled
    },
  }
}
