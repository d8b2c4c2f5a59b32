import type { Clock } from '../clock.js'
import { databaseNow } from '../db/database-clock.js'
import type { DbHandle } from '../db/handle.js'
import { AppError } from '../errors.js'
import { createEventCatchUp, publishAddressedEvent, publishCommitted } from '../events/events.publisher.js'
import { eventIdOf, PING } from '../events/events.repository.js'
import type { Limits, RateLimitStore } from '../rate-limit/rate-limit.port.js'
import { webhookTestSubject } from '../rate-limit/subjects.js'
import { retryAfterOf } from '../rate-limit/windows.js'
import { createAttemptsRepository } from './attempts.repository.js'
import { createEndpointsRepository, type EndpointRow } from './endpoints.repository.js'
import { endpointNumberOf } from './endpoints.service.js'

/** Test events one endpoint takes per minute at most (CONTRACT §14), whoever sends them. */
export const TEST_EVENTS_PER_MINUTE = 10
/** The limiter's windows for them: the day's is out of reach (the minute's number over a whole day). */
const TEST_EVENT_LIMITS: Limits = { perMinute: TEST_EVENTS_PER_MINUTE, perDay: TEST_EVENTS_PER_MINUTE * 1440 }

export type TestEvents = ReturnType<typeof createTestEvents>

/**
 * Test events (`POST /v1/webhook_endpoints/{id}/test`): a `ping` for one enabled endpoint of the caller's,
 * written with its one attempt in one transaction and never fanned out, so it goes to that endpoint only,
 * whatever it subscribes to, and is signed, retried and logged like any delivery. The per-endpoint limit
 * is counted by the rate-limit store (shared by every instance with Redis).
 */
export function createTestEvents(deps: { handle: DbHandle; clock: Clock; limiter: RateLimitStore }) {
  const { handle, clock, limiter } = deps
  const endpoints = createEndpointsRepository(handle)
  const attempts = createAttemptsRepository(handle)
  /** Before the transaction: what it numbers under the lock is then only what committed in between. */
  const catchUp = createEventCatchUp(handle)

  /** The caller's endpoint, enabled: else the 404 or the 409 that says why no test event goes to it. */
  function usable(row: EndpointRow | undefined, endpointId: string): EndpointRow {
    if (!row) throw new AppError('not_found', `webhook endpoint ${endpointId} does not exist`)
    if (row.status !== 'enabled') {
      throw new AppError(
        'conflict',
        `webhook endpoint ${endpointId} is disabled: enable it to send it a test event`,
      )
    }
    return row
  }

  /**
   * Counts one test event of the endpoint, or throws the 429. It looks first and counts only what it admits,
   * so refusals never add up to the limiter's ban; two instances that both looked still cannot admit an
   * 11th, since the count itself is one atomic step of the store.
   */
  async function admit(id: number, endpointId: string): Promise<void> {
    const subject = webhookTestSubject(id)
    let decision = await limiter.peek(subject, TEST_EVENT_LIMITS, clock.now())
    if (decision.outcome === 'allowed')
      decision = await limiter.consume(subject, TEST_EVENT_LIMITS, clock.now())
    if (decision.outcome === 'allowed') return
    const retryAfter = retryAfterOf(decision)
    throw new AppError(
      'rate_limited',
      `webhook endpoint ${endpointId} takes at most ${TEST_EVENTS_PER_MINUTE} test events a minute; retry in ${retryAfter} seconds`,
      { 'retry-after': retryAfter },
    )
  }

  /** Sends a `ping` to the caller's endpoint; the new event's id. */
  async function send(apiKeyId: number, endpointId: string): Promise<string> {
    const id = endpointNumberOf(endpointId)
    // Judged before counting: nobody spends the limit of an endpoint that is not theirs.
    usable(await endpoints.find(apiKeyId, id), endpointId)
    // Before counting too: a 503 behind a backlog spends none of the endpoint's test events.
    await catchUp()
    await admit(id, endpointId)
    const seq = await handle.write(async (trx) => {
      // PostgreSQL: the event order's lock, then the endpoint's row, the order a PATCH takes them in; then
      // judged again, so that a disabling PATCH or a DELETE that committed first leaves nothing pending.
      await publishCommitted(handle, trx)
      const row = usable(await endpoints.lockOwnIn(trx, apiKeyId, id), endpointId)
      const seq = await publishAddressedEvent(handle, trx, {
        type: PING,
        accountId: apiKeyId,
        object: { endpointId },
        createdAt: clock.now(),
      })
      const dueAt = await databaseNow(handle, trx, clock)
      await attempts.schedule(trx, [
        { eventSeq: seq, endpointId: row.id, attempt: 1, dueAt, redelivery: false },
      ])
      return seq
    })
    return eventIdOf(seq)
  }

  return { send }
}
