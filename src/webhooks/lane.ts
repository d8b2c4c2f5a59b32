/**
 * What a lane is (one leased endpoint's queue and requests in flight), how much it holds (the sizes the
 * dispatcher asks its steps to fill, the order steps refill lanes in) and the rules its attempts follow (its
 * cap, which queued attempt goes next, where one put back goes). `lanes.ts` runs them, `turns.ts` orders
 * their starts.
 */
import {
  type AttemptOutcome,
  type ClaimedAttempt,
  MAX_IN_FLIGHT_PER_ENDPOINT,
} from './attempts.repository.js'
import { MAX_ENDPOINTS_PER_ACCOUNT } from './endpoints.service.js'
import type { LeasedEndpoint } from './leases.repository.js'
import type { EndpointTarget } from './ownership.repository.js'
import { CIRCUIT_OPENS_AFTER } from './schedule.js'

/** Requests in flight to an endpoint whose circuit is open: one probe at a time until one succeeds. */
export const OPEN_CIRCUIT_CAP = 1
/** Requests in flight for one account's endpoints at most: its 10 endpoints' 4 places, deleted ones included. */
export const MAX_IN_FLIGHT_PER_ACCOUNT = MAX_ENDPOINTS_PER_ACCOUNT * MAX_IN_FLIGHT_PER_ENDPOINT
/**
 * Attempts a lane keeps queued (taken from the database in one statement for all lanes): QUEUE_SIZE, or
 * for a lane that started more than a quarter of that since the step before, STEPS_QUEUED times what it
 * started, up to MAX_QUEUE_SIZE. A fast endpoint's lane then never runs dry between two steps, and what
 * an instance holds queued grows with the rate it delivers at, not with the number of its lanes.
 */
export const QUEUE_SIZE = 100
export const MAX_QUEUE_SIZE = 1_000
export const STEPS_QUEUED = 4
/**
 * Attempts started per turn of the event loop, at most: the rest start at the next turn, after the
 * requests that came meanwhile were served (a fan-out to 1,000 endpoints would otherwise hold the loop
 * for as long as 1,000 requests take to build, sign and send).
 */
export const STARTS_PER_TURN = 16
/** After a failed read of their ownership, attempts put back in their queues wait this long. */
export const REREAD_MS = 100

/**
 * How many attempts to take for a lane with `queued` queued that started `started` since the step before:
 * none while its queue is at least half its size.
 */
export function wantFor(queued: number, started = 0): number {
  const size = Math.min(MAX_QUEUE_SIZE, Math.max(QUEUE_SIZE, STEPS_QUEUED * started))
  return queued < size / 2 ? size - queued : 0
}

/**
 * How many attempts each lane should be sent to fill its queue (only lanes running low), by what it started
 * since the step before, or since it was last refilled when it waits for its turn (`lanes.counted`).
 */
export function wantsOf(lanes: Iterable<Lane>): { endpointId: number; count: number }[] {
  const wants = []
  for (const lane of lanes) {
    if (lane.rotating) continue
    const count = wantFor(lane.queue.length, lane.startedSinceStep)
    if (count > 0) wants.push({ endpointId: lane.id, count })
  }
  return wants
}

/** Up to `count` lanes leased before `before` and not rotating yet, the longest held first. */
export function longestHeld(lanes: Iterable<Lane>, before: number, count: number): Lane[] {
  return [...lanes]
    .filter((lane) => !lane.rotating && lane.leasedAt <= before)
    .sort((a, b) => a.leasedAt - b.leasedAt)
    .slice(0, count)
}

/** Lanes with nothing queued nor in flight since before `before`, or at all for those making room. */
export function idleBefore(lanes: Iterable<Lane>, before: number): number[] {
  return [...lanes]
    .filter((lane) => lane.idleSince !== undefined && (lane.rotating || lane.idleSince <= before))
    .map((lane) => lane.id)
}

/**
 * Attempts an instance holds per endpoint and has not written down yet (queued, in flight, or ended since
 * the last step): pending rows already on their way (to be sent, being sent, or answered), which the
 * fan-out's gate does not count.
 */
export function heldPerEndpoint(lanes: Iterable<Lane>, ended: readonly Ended[]): Map<number, number> {
  const held = new Map<number, number>()
  const add = (endpointId: number, count: number) => held.set(endpointId, (held.get(endpointId) ?? 0) + count)
  for (const lane of lanes) add(lane.id, lane.queue.length + lane.running.size)
  for (const end of ended) add(end.claimed.endpoint.id, 1)
  return held
}

/** Requests the lane may have in flight: 4, or 1 while its circuit is open. */
export const capOf = (lane: Lane): number =>
  lane.failuresInRow >= CIRCUIT_OPENS_AFTER ? OPEN_CIRCUIT_CAP : MAX_IN_FLIGHT_PER_ENDPOINT

/** Takes the lane's first queued attempt whose event is not in flight to this endpoint already. */
export function nextOf(lane: Lane): ClaimedAttempt | undefined {
  const busy = new Set([...lane.running.values()].map((entry) => entry.claimed.event.seq))
  const index = lane.queue.findIndex((claimed) => !busy.has(claimed.event.seq))
  return index === -1 ? undefined : lane.queue.splice(index, 1)[0]
}

/** Back in the lane's queue, ahead of any with a higher id: attempts put back one by one keep their order. */
export function putBackInOrder(lane: Lane, claimed: ClaimedAttempt): void {
  const after = lane.queue.findIndex((queued) => queued.id > claimed.id)
  lane.queue.splice(after === -1 ? lane.queue.length : after, 0, claimed)
}

/**
 * Reads the attempt's target while it is still this instance's (with those queued behind it, which a read
 * may answer for ahead); a read that throws is a rejection.
 */
export function readTarget(
  options: Pick<LanesOptions, 'targetIfOwn'>,
  claimed: ClaimedAttempt,
  queued: readonly ClaimedAttempt[],
): EndpointTarget | undefined | Promise<EndpointTarget | undefined> {
  try {
    return options.targetIfOwn(claimed, queued)
  } catch (error) {
    return Promise.reject(error)
  }
}

/** The lane of an endpoint just leased: nothing queued, nothing in flight. */
export const laneFor = (endpoint: LeasedEndpoint, now: number): Lane => ({
  ...endpoint,
  queue: [],
  running: new Map(),
  idleSince: now,
  startedSinceStep: 0,
  leasedAt: now,
  rotating: false,
})

/** One attempt in flight, or being checked just before it starts. */
export interface Running {
  claimed: ClaimedAttempt
  done: Promise<void>
}

/** What an ended attempt leaves for the next step to write down. */
export interface Ended {
  claimed: ClaimedAttempt
  outcome: AttemptOutcome
}

/** The endpoint whose lease this dispatcher holds, with its own queue and its own requests in flight. */
export interface Lane {
  id: number
  accountId: number
  queue: ClaimedAttempt[]
  running: Map<number, Running>
  failuresInRow: number
  /** Since when it has had nothing queued nor in flight (undefined while it has). */
  idleSince: number | undefined
  /** Attempts started since the last step asked what it wants (`wants`): its queue's size follows it. */
  startedSinceStep: number
  /** When it was leased (the dispatcher's monotonic clock, as `idleSince`). */
  leasedAt: number
  /** Making room for endpoints that wait (`lanes.rotate`): refilled no more, let go once idle. */
  rotating: boolean
}

export interface LanesOptions {
  /** Requests in flight from this instance at most, over every lane (sockets). */
  maxInFlight: number
  /**
   * Makes the attempt to `target` (never throws); undefined when it did not start after all:
   * `targetIfStillOwn`, asked again once the name's lookup took long, said it is no longer this
   * instance's (attempt.ts).
   */
  run(
    claimed: ClaimedAttempt,
    target: EndpointTarget,
    signal: AbortSignal,
    targetIfStillOwn: () => Promise<EndpointTarget | undefined>,
  ): Promise<AttemptOutcome | undefined>
  /**
   * Asked just before an attempt starts: where and how to send it (its endpoint's URL and secrets now),
   * or undefined when it was ended meanwhile (a DELETE) or taken over. Synchronous where the database is
   * (SQLite), or where a read of it with those `queued` behind it still answers (PostgreSQL:
   * ownership.repository.ts), so the attempt starts in the same turn.
   */
  targetIfOwn(
    claimed: ClaimedAttempt,
    queued: readonly ClaimedAttempt[],
  ): EndpointTarget | undefined | Promise<EndpointTarget | undefined>
  /** The dispatcher's monotonic clock (idle and held times: intervals, never stored). */
  now(): number
  /** Whether this instance's leases are surely still its own (false after a freeze, until renewed). */
  mayStart(): boolean
  /** Told when an attempt starts (the lag metric) and when one ends (a step should write it down). */
  started(claimed: ClaimedAttempt): void
  ended(): void
}
