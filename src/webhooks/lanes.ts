import { createAccountShares } from './account-shares.js'
import type { AttemptOutcome, ClaimedAttempt } from './attempts.repository.js'
import { createHangUps } from './hang-ups.js'
import {
  capOf,
  type Ended,
  heldPerEndpoint,
  type Lane,
  type LanesOptions,
  MAX_IN_FLIGHT_PER_ACCOUNT,
  nextOf,
  putBackInOrder,
  REREAD_MS,
  type Running,
  readTarget,
} from './lane.js'
import { createLaneSet } from './lane-set.js'
import type { EndpointTarget } from './ownership.repository.js'
import { createTurns } from './turns.js'

export type Lanes = ReturnType<typeof createLanes>

/**
 * The endpoints one dispatcher sends to, each a lane with its own queue: an attempt starts as soon as
 * its lane has a free place (4 requests in flight, 1 while its circuit is open) and the instance a free
 * socket, so an endpoint's rate is bounded by the receiver's speed, not by the dispatcher's steps. Lanes
 * with work take the free sockets in turn, so no endpoint, however slow, holds more than its own places.
 */
export function createLanes(options: LanesOptions) {
  const set = createLaneSet(options.now, (lane) => turns.delete(lane))
  const lanes = set.held
  let ended: Ended[] = []
  let inFlight = 0
  const accounts = createAccountShares(MAX_IN_FLIGHT_PER_ACCOUNT)
  const turns = createTurns({
    mayStart: options.mayStart,
    hasRoom: () => inFlight < options.maxInFlight,
    startNext(lane) {
      if (lane.running.size >= capOf(lane) || !lanes.has(lane.id) || lane.queue.length === 0) return false
      if (!accounts.admits(lane)) return false
      const claimed = nextOf(lane)
      if (claimed) start(lane, claimed)
      return claimed !== undefined
    },
  })
  const pump = turns.pump

  const hangUps = createHangUps(options.maxInFlight)
  /** Attempts told `started` (the lag metric, a lane's refill): each once, however often it starts. */
  const startedOnce = new WeakSet<ClaimedAttempt>()

  function start(lane: Lane, claimed: ClaimedAttempt): void {
    const entry = { claimed } as Running
    lane.running.set(claimed.id, entry)
    lane.idleSince = undefined
    inFlight++
    accounts.started(lane.accountId)
    let unread = false
    const signal = hangUps.signal
    const attempt = (target: EndpointTarget | undefined) => {
      if (target === undefined || hangUps.stopped) return undefined
      // Where the read is asynchronous (PostgreSQL), the leases may have stopped being surely this
      // instance's while it ran: the attempt waits in its queue for the next renewal.
      if (signal.aborted || !options.mayStart()) return putBack()
      // Once per attempt taken: one put back after its second read failed starts again uncounted.
      if (!startedOnce.has(claimed)) {
        startedOnce.add(claimed)
        lane.startedSinceStep++
        options.started(claimed)
      }
      return options.run(claimed, target, signal, targetIfStillOwn)
    }
    // Asked again after a slow lookup: a failed read puts the attempt back, as before it started.
    const targetIfStillOwn = async (): Promise<EndpointTarget | undefined> => {
      try {
        return await readTarget(options, claimed, [])
      } catch {
        unreadable()
        return undefined
      }
    }
    // Back in its queue while the lane is still held.
    const putBack = () => {
      if (set.holds(lane)) putBackInOrder(lane, claimed)
      return undefined
    }
    // A failed read (a lost connection, a deadline): back in its queue, read again REREAD_MS later.
    const unreadable = () => {
      unread = true
      return putBack()
    }
    const target = readTarget(options, claimed, lane.queue)
    const outcome = target instanceof Promise ? target.then(attempt, unreadable) : attempt(target)
    entry.done = Promise.resolve(outcome).then((outcome) =>
      attemptOver(lane, claimed, outcome, signal, unread),
    )
  }

  /**
   * An attempt is over, or did not start: its place is free, its outcome kept for the next step to write
   * down (one aborted is given back instead), and what may start next starts (after REREAD_MS when its
   * ownership read failed).
   */
  function attemptOver(
    lane: Lane,
    claimed: ClaimedAttempt,
    outcome: AttemptOutcome | undefined,
    signal: AbortSignal,
    unread: boolean,
  ): void {
    lane.running.delete(claimed.id)
    inFlight--
    for (const waited of accounts.ended(lane.accountId)) turns.add(waited)
    set.drained(lane)
    // Aborted, never written as an outcome: given back by the dispatcher (SIGTERM) or the next step.
    if (outcome && !signal.aborted) {
      ended.push({ claimed, outcome })
      lane.failuresInRow = outcome.error === null ? 0 : lane.failuresInRow + 1
    } else if (outcome && !hangUps.stopped) hangUps.add(claimed)
    if (lane.running.size === 0 && lane.queue.length === 0) lane.idleSince = options.now()
    turns.add(lane)
    if (unread) setTimeout(pump, REREAD_MS).unref()
    else pump()
    options.ended()
  }

  return {
    pump,
    get size() {
      return lanes.size
    },
    add: set.add,
    /** Queues attempts taken for these lanes and starts what may start. */
    enqueue(taken: readonly ClaimedAttempt[]): void {
      // Each lane's queued ids read once per call: a refill of 1,000 to 100 lanes is 100,000 attempts.
      const queuedIn = new Map<Lane, Set<number>>()
      for (const claimed of taken) {
        const lane = lanes.get(claimed.endpoint.id)
        if (!lane || lane.running.has(claimed.id)) continue
        const queued = queuedIn.get(lane) ?? new Set(lane.queue.map((attempt) => attempt.id))
        queuedIn.set(lane, queued)
        if (queued.has(claimed.id)) continue
        queued.add(claimed.id)
        lane.queue.push(claimed)
        lane.idleSince = undefined
        turns.add(lane)
      }
      pump()
    },
    wants: set.wants,
    counted: set.counted,
    idleSince: set.idleSince,
    remove: set.remove,
    unqueue: set.unqueue,
    rotate: set.rotate,
    retire: set.retire,
    rotating: set.rotating,
    /** Outcomes a step could not write: the next one writes them. */
    giveBackEnded(outcomes: readonly Ended[]): void {
      ended = [...outcomes, ...ended]
    },
    /** What ended since the last call, the first `max` of it at most (the step writes it down). */
    takeEnded(max = Number.POSITIVE_INFINITY): Ended[] {
      const taken = ended.slice(0, max)
      ended = ended.slice(taken.length)
      return taken
    },
    /** Outcomes ended and not taken yet. */
    get endedCount() {
      return ended.length
    },
    /** The endpoints of outcomes ended and not taken yet: their lanes are not idle (a step's bound left them). */
    endedEndpoints: (): Set<number> => new Set(ended.map((outcome) => outcome.claimed.endpoint.id)),
    /**
     * Hangs up on every request in flight (the leases are no longer surely this instance's: another may
     * take its endpoints over); their attempts are given back by the next step instead of written down.
     * How many there were.
     */
    hangUp(): number {
      const count = inFlight
      if (count > 0) hangUps.hangUp()
      return count
    },
    /** Attempts hung up on since the last call (the step gives them back); a step that failed, puts them back. */
    takeHungUp: () => hangUps.take(),
    putBackHungUp: (claimed: readonly ClaimedAttempt[]) => hangUps.putBack(claimed),
    ids: set.ids,
    /** Attempts held per endpoint and not written down yet (the fan-out's gate leaves them out). */
    held: () => heldPerEndpoint(set.every(), ended),
    /** Whether anything is queued, in flight, or ended (or hung up on) and not yet written down. */
    hasWork: () =>
      ended.length > 0 ||
      hangUps.count > 0 ||
      inFlight > 0 ||
      [...lanes.values()].some((lane) => lane.queue.length > 0),
    /** Every attempt in flight, to wait for at shutdown. */
    running: (): Running[] => set.every().flatMap((lane) => [...lane.running.values()]),
    /** Aborts every attempt in flight; none is written down (the dispatcher gives them back). */
    abortAll: () => hangUps.abortAll(),
    /** Requests in flight per account (a metric). */
    inFlightByAccount: () => accounts.inFlight(),
  }
}
