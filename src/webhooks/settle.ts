import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import {
  type AttemptOutcome,
  type ClaimedAttempt,
  createAttemptsRepository,
  type NextAttempt,
} from './attempts.repository.js'
import { createCircuitsRepository, type FailureCount, type Streak } from './circuits.repository.js'
import { createDisabler } from './disable.js'
import { createOutcomesRepository } from './outcomes.repository.js'
import { FAILING_DISABLES_AFTER_MS, retryDelayMs } from './schedule.js'

/** How an attempt ended for the metrics: delivered, to be tried again, or given up. */
export type Settled = 'succeeded' | 'retried' | 'failed' | 'lost'

/** An attempt that ended, and what came of it. */
interface EndedAttempt {
  claimed: ClaimedAttempt
  outcome: AttemptOutcome
}

const isGone = ({ outcome }: EndedAttempt) => outcome.httpStatus === 410

/** Each endpoint's failures among `failed`, and when the first of them started; by endpoint id. */
function countsOf(failed: readonly EndedAttempt[]): FailureCount[] {
  const counts = new Map<number, FailureCount>()
  for (const { claimed, outcome } of failed) {
    const count = counts.get(claimed.endpoint.id)
    if (count) {
      count.failures++
      count.since = Math.min(count.since, outcome.startedAt)
    } else
      counts.set(claimed.endpoint.id, {
        endpointId: claimed.endpoint.id,
        failures: 1,
        since: outcome.startedAt,
      })
  }
  return [...counts.values()].sort((a, b) => a.endpointId - b.endpointId)
}

/** Whether the endpoint still takes deliveries (neither disabled nor deleted). */
const takes = (streak: Streak | undefined): streak is Streak =>
  streak?.status === 'enabled' && streak.deleted_at === null

/**
 * Writes down what came of attempts, in the dispatcher's transaction: the attempt's row (only while this
 * dispatcher still holds it), then the series' next step: nothing after a success, the next attempt on
 * the schedule after a failure, or the endpoint disabled (a 410, five days of failures). Each outcome
 * also moves the endpoint's failing streak (`failing_since`, `failures_in_row`: its circuit). A step's
 * failures cost a few statements however many they are: one moves every endpoint's streak, one (per
 * 1,000) writes every retry, and each endpoint disabled costs its own.
 */
export function createSettler(handle: DbHandle, options: { retryScale: number }) {
  const attempts = createAttemptsRepository(handle)
  const outcomes = createOutcomesRepository(handle)
  const circuits = createCircuitsRepository(handle)
  const disable = createDisabler(handle, { answered: false })
  const failingTooLong = (streak: Streak, now: number) =>
    now - (streak.failing_since ?? now) >= FAILING_DISABLES_AFTER_MS * options.retryScale

  /** The attempt after this failed one on the schedule; undefined when the schedule is over. */
  function retryOf({ claimed, outcome }: EndedAttempt, now: number): NextAttempt | undefined {
    const delay = retryDelayMs(claimed.attempt, {
      scale: options.retryScale,
      retryAfterMs: outcome.retryAfterMs,
    })
    if (delay === undefined) return undefined
    const { endpoint, event, redelivery } = claimed
    return {
      eventSeq: event.seq,
      endpointId: endpoint.id,
      attempt: claimed.attempt + 1,
      dueAt: now + delay,
      redelivery,
    }
  }

  /**
   * Failed attempts (written down already): their endpoints' streaks moved, endpoints disabled, retries
   * written; how each counts, in order.
   */
  async function afterFailures(trx: Db, failed: readonly EndedAttempt[], now: number): Promise<Settled[]> {
    if (failed.length === 0) return []
    // A 410 disables its endpoint before any failure is counted: its other failures in this step, those
    // that ended before the 410 too, then find it disabled and none of them is retried.
    const gone = [...new Set(failed.filter(isGone).map(({ claimed }) => claimed.endpoint.id))]
    for (const id of gone) await disable(trx, id, 'the endpoint answered 410 Gone', now)
    const streaks = await circuits.countFailures(trx, countsOf(failed.filter((end) => !isGone(end))))
    const expired = [...streaks.values()].filter((streak) => takes(streak) && failingTooLong(streak, now))
    for (const { id } of expired) await disable(trx, id, 'every delivery to it failed for 5 days', now)
    const ended = new Set([...gone, ...expired.map((streak) => streak.id)])
    const retries: NextAttempt[] = []
    const settled = failed.map((end): Settled => {
      const id = end.claimed.endpoint.id
      const retry = takes(streaks.get(id)) && !ended.has(id) ? retryOf(end, now) : undefined
      if (retry) retries.push(retry)
      return retry ? 'retried' : 'failed'
    })
    await attempts.schedule(trx, retries)
    return settled
  }

  return {
    /**
     * Writes down attempts that ended (all `owner`'s); how each one counts for the metrics, in order. A
     * success ends its endpoint's failing streak and closes its circuit (once per endpoint), also when
     * other attempts to it failed in the same step. One that an ending (a disable, a DELETE) failed while
     * it was in flight is written as it came and ends there: no retry, and its endpoint's streak does not
     * move. A re-enable since has reset that streak and ended everything from before it; retried, such a
     * failure was sent again after the re-enable's answer.
     */
    async settleAll(trx: Db, ended: readonly EndedAttempt[], owner: string, now: number): Promise<Settled[]> {
      const written = await outcomes.writeOutcomes(
        trx,
        owner,
        ended.map(({ claimed, outcome }) => ({ id: claimed.id, outcome })),
      )
      const kept = ended.filter(({ claimed }) => written.pending.has(claimed.id))
      const failures = await afterFailures(
        trx,
        kept.filter(({ outcome }) => outcome.error !== null),
        now,
      )
      const succeeded = kept.filter(({ outcome }) => outcome.error === null)
      await circuits.closeCircuits(trx, [...new Set(succeeded.map(({ claimed }) => claimed.endpoint.id))])
      // `failures` follows the failed attempts of `kept` in the order of `ended`.
      let failure = 0
      return ended.map(({ claimed, outcome }): Settled => {
        if (written.ended.has(claimed.id)) return outcome.error === null ? 'succeeded' : 'failed'
        if (!written.pending.has(claimed.id)) return 'lost'
        return outcome.error === null ? 'succeeded' : (failures[failure++] ?? 'failed')
      })
    },
  }
}
