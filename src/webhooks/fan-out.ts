import type { Span } from '@opentelemetry/api'
import { lockTransaction } from '../db/advisory-lock.js'
import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { publishEvents } from '../events/events.publisher.js'
import { createEventsRepository, type WaitingEvent } from '../events/events.repository.js'
import { inSpan, linksTo } from '../tracing/tracing.js'
import { createAttemptsRepository, type NextAttempt } from './attempts.repository.js'
import { createEndpointsRepository, type Taker } from './endpoints.repository.js'
import { inTurn } from './in-turn.js'
import { subscribes } from './schedule.js'

/** Events looked at per transaction, at least (more while few endpoints are enabled: `eventsPerFanOut`). */
export const FAN_OUT_EVENTS = 200
/**
 * Attempts written per transaction at most, whatever the number of subscribers: an event with more
 * takers is fanned out over several transactions (`fan_out_after` keeps its place).
 */
export const FAN_OUT_ROWS = 2_000

/**
 * Events a transaction looks at while `enabled` endpoints are enabled: as many as FAN_OUT_ROWS attempts
 * would cover if every one took each (666 for 3 endpoints), never fewer than FAN_OUT_EVENTS. With a fixed
 * 200, a step fed each of 3 fast endpoints 200 attempts, fewer than one sends between two steps on
 * PostgreSQL (about 60 ms there): their lanes ran dry while a backlog waited (docs/performance.md).
 */
export const eventsPerFanOut = (enabled: number): number =>
  Math.max(FAN_OUT_EVENTS, Math.floor(FAN_OUT_ROWS / Math.max(1, enabled)))

/** What waiting events need now: fanning out, `events` of them per transaction at most, or passing over. */
export type FanOutDemand = { kind: 'fan'; events: number } | { kind: 'pass' }
/**
 * Events wait in the outbox (one row each) while every enabled endpoint has this many attempts due beyond
 * those the instance asking already holds (queued in its lane, in flight, or ended and not yet written
 * down): a write then costs one row, not one per subscriber, and the rows are written as the queues
 * drain. One hungry endpoint is enough to fan out, so no backlog, however long, holds back anyone else's
 * events. Held attempts do not count: a lane queues up to MAX_QUEUE_SIZE (lane.ts), and counting them
 * left a fast endpoint's lane dry while its queue looked like a backlog.
 */
export const FAN_OUT_AHEAD = 500
/**
 * Endpoints one `demand` asks at most (each a read of up to FAN_OUT_AHEAD index entries), in turn from
 * where the last left off: while every one has its fill (every partner's server down), a step's plan reads
 * a bounded part of them, not all, and a hungry one is found within enabled ÷ DEMAND_PROBES steps.
 */
export const DEMAND_PROBES = 50
/**
 * With no endpoint enabled, waiting events are marked, no attempt written, this many per statement at most:
 * enough to keep up with any write rate from one poll to the next.
 */
export const PASS_OVER_EVENTS = 10_000

/**
 * PostgreSQL: fan-outs take this lock shared (they never wait on one another), and a DELETE or a disable
 * that answers takes it whole (`waitForFanOuts`) once it holds the endpoint's row, before it ends the
 * endpoint's pending attempts. A fan-out that read the endpoint enabled commits first, so the ending sees
 * its attempts too; one that starts meanwhile waits, then reads the endpoint ended. Without it such a
 * fan-out left a pending attempt the ending never saw: sent after the answer, until a step's take learned
 * to end the attempts of ended endpoints (ended-endpoints.ts, which guards the unanswered disable too), and
 * still left pending, counted as due, on a deleted endpoint no dispatcher leases. SQLite runs one write at
 * a time: nothing to wait for.
 */
const FAN_OUT_LOCK = 0x6661_6e6f // "fano"

/** In an ending's transaction, once it holds the endpoint's row: fan-outs in flight have committed. */
export const waitForFanOuts = (handle: Pick<DbHandle, 'dialect'>, trx: Db): Promise<void> =>
  lockTransaction(handle, trx, FAN_OUT_LOCK)

export type FanOut = ReturnType<typeof createFanOut>

/**
 * Events committed and not yet fanned out become one pending attempt per endpoint that takes them, in
 * the same transaction as the mark, so a crash never loses nor doubles one. On PostgreSQL instances
 * fanning out at once take disjoint events (`FOR UPDATE SKIP LOCKED`).
 */
export function createFanOut(handle: DbHandle) {
  const events = createEventsRepository(handle)
  const endpoints = createEndpointsRepository(handle)
  const attempts = createAttemptsRepository(handle)
  /** The last endpoint `demand` found with its fill: the next asks from the one after it. */
  let askedUpTo = 0

  /**
   * Fans out up to `limit` waiting events, oldest first, writing at most FAN_OUT_ROWS attempts; how many
   * events it finished.
   */
  async function fanOut(trx: Db, now: number, limit = FAN_OUT_EVENTS): Promise<number> {
    const waiting = await events.waitingIn(trx, limit)
    if (waiting.length === 0) return 0
    // With tracing on: a span of its own, linked to each event's change (the span limits keep 128 links).
    const links = linksTo(waiting.map((event) => event.trace_parent))
    // The events it looked at, by the number in their ids (evt_…42 is 42): a search finds the fan-out
    // of an event that has no attempt to show.
    const attributes = {
      'petstore.fan_out.events': waiting.length,
      'petstore.fan_out.first_event_seq': waiting[0]?.seq ?? 0,
      'petstore.fan_out.last_event_seq': waiting.at(-1)?.seq ?? 0,
    }
    return inSpan('webhook fan-out', attributes, (span) => fanOutWaiting(trx, waiting, now, span), {
      links,
      root: true,
    })
  }

  async function fanOutWaiting(
    trx: Db,
    waiting: readonly WaitingEvent[],
    now: number,
    span: Span | undefined,
  ): Promise<number> {
    await lockTransaction(handle, trx, FAN_OUT_LOCK, 'shared')
    const takers = await endpoints.takersIn(trx, waiting[0]?.seq ?? 0, now)
    let budget = FAN_OUT_ROWS
    const done: number[] = []
    const firsts: NextAttempt[] = []
    for (const event of waiting) {
      const all = takers.filter(
        (endpoint) =>
          endpoint.id > event.fan_out_after &&
          (event.api_key_id === null || event.api_key_id === endpoint.accountId) &&
          event.seq > endpoint.enabledAfterSeq &&
          subscribes(patternsAt(endpoint, event.seq), event.type),
      )
      const part = all.slice(0, budget)
      const first = (endpoint: Taker) => ({
        eventSeq: event.seq,
        endpointId: endpoint.id,
        attempt: 1,
        dueAt: now,
        redelivery: false,
      })
      firsts.push(...part.map(first))
      budget -= part.length
      if (part.length < all.length) {
        const last = part.at(-1)
        if (last) await events.keepFanOutPlace(trx, event.seq, last.id)
        break
      }
      done.push(event.seq)
      if (budget === 0) break
    }
    await attempts.schedule(trx, firsts)
    await events.markFannedOut(trx, done)
    span?.setAttributes({
      'petstore.fan_out.attempts': FAN_OUT_ROWS - budget,
      'petstore.fan_out.finished': done.length,
    })
    return done.length
  }

  return {
    fanOut,
    /**
     * What waiting events need now: `fan` when some enabled endpoint has fewer than FAN_OUT_AHEAD attempts
     * due beyond the `held` ones, per endpoint (retries due later do not count: the first one found
     * answers; DEMAND_PROBES asked at most, in turn), with how many to look at (`eventsPerFanOut`); `pass`
     * when no endpoint is enabled, so nobody takes them (`passOver`); undefined while those asked have
     * their fill.
     */
    async demand(
      now: number,
      held: ReadonlyMap<number, number> = new Map(),
    ): Promise<FanOutDemand | undefined> {
      const enabled = await endpoints.enabledIds()
      if (enabled.length === 0) return { kind: 'pass' }
      for (const id of inTurn(enabled, askedUpTo, DEMAND_PROBES)) {
        if (!(await attempts.hasDue(id, now, FAN_OUT_AHEAD + (held.get(id) ?? 0))))
          return { kind: 'fan', events: eventsPerFanOut(enabled.length) }
        askedUpTo = id
      }
      return undefined
    },
    /**
     * With no endpoint enabled, marks up to PASS_OVER_EVENTS waiting events fanned out, oldest first, in
     * one statement: no attempt and no span (else they would wait for ever, out of retention's reach, the
     * outbox's depth and age growing over nothing owed). The last event id is read before endpoints are
     * looked at again, and only events up to it are marked: an endpoint enabled meanwhile takes what
     * commits after its own creation, which is later. How many it marked.
     */
    async passOver(trx: Db): Promise<number> {
      const upTo = await events.lastSeqIn(trx)
      if ((await endpoints.enabledIds()).length > 0) return 0
      return events.markWaitingUpTo(trx, upTo, PASS_OVER_EVENTS)
    },
    /** Forgets earlier subscriptions that no event waiting to be fanned out can need any more. */
    async pruneSubscriptions(trx: Db): Promise<void> {
      // Under the publishers' lock (PostgreSQL), which a PATCH holds while it publishes and keeps the
      // subscription it replaces: one that committed between the read and the delete below lost the
      // subscription its just-published event, still waiting, is to be judged by. The lock is what it
      // needs, not an empty outbox: one bounded publication takes it (events still waiting there will be
      // numbered after every kept subscription's last event, and need none of them).
      await publishEvents(handle, trx)
      const oldest = await events.oldestWaitingIn(trx)
      await endpoints.forgetSubscriptionsBefore(trx, oldest ?? Number.MAX_SAFE_INTEGER)
    },
  }
}

/** The subscription in force when event `seq` committed: the earliest kept one that held for it, else today's. */
function patternsAt(taker: Taker, seq: number): string[] {
  return taker.earlier.find((kept) => kept.untilSeq >= seq)?.patterns ?? taker.patterns
}
