import type { Clock } from '../clock.js'
import type { Db } from '../db/database.js'
import { databaseNow } from '../db/database-clock.js'
import type { DbHandle } from '../db/handle.js'
import { AppError } from '../errors.js'
import { createEventCatchUp } from '../events/events.publisher.js'
import {
  createEventsRepository,
  type EventRow,
  eventBodyOf,
  eventIdOf,
  PING,
  seqOfEventId,
} from '../events/events.repository.js'
import { afterIdOf, keysetPage, type Page } from '../pagination/keyset.js'
import { MAX_SAFE_ID } from '../schema-ref.js'
import { createAttemptsRepository } from './attempts.repository.js'
import { createEndpointsRepository } from './endpoints.repository.js'
import { endpointIdOf, endpointNumberOf } from './endpoints.service.js'
import { subscribes } from './schedule.js'
import type { AttemptStatus, DeliveryAttempt } from './webhooks.schemas.js'

/** Events and attempts are kept this long (CONTRACT §14). */
export const RETENTION_MS = 30 * 24 * 60 * 60 * 1000

export type EventLog = ReturnType<typeof createEventLog>

/**
 * What an account reads of the events (its orders' and every pet's, from the last 30 days, in commit
 * order), their redelivery, and the attempts made to its endpoints. Event bodies are served as the JSON
 * text deliveries send, byte for byte.
 */
export function createEventLog(deps: { handle: DbHandle; clock: Clock }) {
  const { handle, clock } = deps
  const endpoints = createEndpointsRepository(handle)
  const attempts = createAttemptsRepository(handle)
  const events = createEventsRepository(handle)
  const catchUp = createEventCatchUp(handle)
  /** The event as JSON text, or a 404 when the caller cannot see it (another account's order, too old). */
  async function eventRow(apiKeyId: number, eventId: string): Promise<EventRow> {
    const seq = seqOfEventId(eventId)
    const row = seq === undefined ? undefined : await events.find(apiKeyId, clock.now() - RETENTION_MS, seq)
    if (!row) throw new AppError('not_found', `event ${eventId} does not exist`)
    return row
  }

  async function listEvents(query: {
    apiKeyId: number
    limit: number
    type?: string
    cursor?: string
    order?: 'asc' | 'desc'
  }) {
    // Every event committed before this page is read has its id first (PostgreSQL publishes them, in
    // bounded transactions; after a backlog too large for that, a 503 to retry).
    await catchUp()
    const since = clock.now() - RETENTION_MS
    // A cursor names the last event of the page before: the next page starts after it, or before it
    // when newest come first (as the delivery log pages).
    const rows =
      query.order === 'desc'
        ? await events.newestPage(
            query.apiKeyId,
            since,
            query.cursor === undefined ? MAX_SAFE_ID : afterIdOf(query.cursor),
            query.limit + 1,
            query.type,
          )
        : await events.page(query.apiKeyId, since, afterIdOf(query.cursor), query.limit + 1, query.type)
    const keyed = keysetPage(
      rows.map((row) => ({ id: row.seq, row })),
      query.limit,
    )
    return { items: keyed.items.map(({ row }) => eventBodyOf(row)), nextCursor: keyed.nextCursor }
  }

  /**
   * The caller's endpoints a redelivery goes to: the one named (enabled), or every enabled one subscribed.
   * Their rows are locked (PostgreSQL), as a test event locks its endpoint: a disabling PATCH or a DELETE
   * that commits first is seen here, and one that comes later waits for the attempts written by this
   * transaction, then ends them.
   */
  async function targetsOf(trx: Db, apiKeyId: number, type: string, endpointId?: string): Promise<number[]> {
    if (endpointId !== undefined) {
      const row = await endpoints.lockOwnIn(trx, apiKeyId, endpointNumberOf(endpointId))
      if (!row) throw new AppError('not_found', `webhook endpoint ${endpointId} does not exist`)
      if (row.status !== 'enabled') {
        throw new AppError('conflict', `webhook endpoint ${endpointId} is disabled: enable it first`)
      }
      return [row.id]
    }
    const rows = await endpoints.lockEnabledOfAccount(trx, apiKeyId)
    const ids = rows.filter((row) => subscribes(JSON.parse(row.events), type)).map((row) => row.id)
    if (ids.length === 0) {
      throw new AppError('conflict', `none of your enabled webhook endpoints subscribes to ${type}`)
    }
    return ids
  }

  /**
   * A new series of attempts of the event (same `webhook-id`), due now. A `ping` goes again to the endpoint
   * it tests, and only there: naming another endpoint is a 409.
   */
  async function redeliver(apiKeyId: number, eventId: string, endpointId?: string) {
    const event = await eventRow(apiKeyId, eventId)
    const tested =
      event.type === PING ? (JSON.parse(event.object) as { endpointId: string }).endpointId : undefined
    if (tested !== undefined && endpointId !== undefined && endpointId !== tested) {
      throw new AppError(
        'conflict',
        `${eventId} is a test event of ${tested}: it can be sent to ${tested} only`,
      )
    }
    const targets = await handle.write(async (trx) => {
      // Due on the database's clock, as every lease and retry is (not this host's).
      const now = await databaseNow(handle, trx, clock)
      const ids = await targetsOf(trx, apiKeyId, event.type, endpointId ?? tested)
      const first = (id: number) => ({ eventSeq: event.seq, endpointId: id, attempt: 1, dueAt: now })
      await attempts.schedule(
        trx,
        ids.map((id) => ({ ...first(id), redelivery: true })),
      )
      return ids
    })
    return { eventId, endpointIds: targets.map(endpointIdOf) }
  }

  /** The attempts made to one of the caller's endpoints, newest first. */
  async function listDeliveries(query: {
    apiKeyId: number
    endpointId: string
    limit: number
    status?: AttemptStatus | undefined
    cursor?: string | undefined
  }): Promise<Page<DeliveryAttempt>> {
    const id = endpointNumberOf(query.endpointId)
    if (!(await endpoints.find(query.apiKeyId, id))) {
      throw new AppError('not_found', `webhook endpoint ${query.endpointId} does not exist`)
    }
    const beforeId = query.cursor === undefined ? MAX_SAFE_ID : afterIdOf(query.cursor)
    const rows = await attempts.deliveryPage(id, beforeId, query.limit + 1, query.status)
    const keyed = keysetPage(rows, query.limit)
    return { ...keyed, items: keyed.items.map(toAttempt) }
  }

  return {
    listEvents,
    /** One event's JSON text. */
    getEvent: async (apiKeyId: number, eventId: string) => eventBodyOf(await eventRow(apiKeyId, eventId)),
    redeliver,
    listDeliveries,
  }
}

function toAttempt(row: {
  event_seq: number
  attempt: number
  at: number
  status: string
  http_status: number | null
  error: string | null
  duration_ms: number | null
}): DeliveryAttempt {
  return {
    eventId: eventIdOf(row.event_seq),
    attempt: row.attempt,
    at: new Date(row.at).toISOString(),
    status: row.status as AttemptStatus,
    httpStatus: row.http_status,
    error: row.error,
    durationMs: row.duration_ms,
  }
}
