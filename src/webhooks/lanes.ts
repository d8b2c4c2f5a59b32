import type { AttemptOutcome, ClaimedAttempt } from './attempts.repository.js'
import { createHangUps } from './hang-ups.js'
import {
  capOf,
  type Ended,
  heldPerEndpoint,
  inFlightPerAccount,
  type Lane,
  type LanesOptions,
  nextOf,
  putBackInOrder,
  REREAD_MS,
  type Running,
  readOwn,
  wantFor,
} from './lane.js'
import type { LeasedEndpoint } from './leases.repository.js'
import { createTurns } from './turns.js'

export type Lanes = ReturnType<typeof createLanes>

/**
 * The endpoints one dispatcher sends to, each a lane with its own queue: an attempt starts as soon as
 * its lane has a free place (4 requests in flight, 1 while its circuit is open) and the instance a free
 * socket, so an endpoint's rate is bounded by the receiver's speed, not by the dispatcher's steps. Lanes
 * with work take the free sockets in turn, so no endpoint, however slow, holds more than its own places.
 */
export function createLanes(options: LanesOptions) {
  const lanes = new Map<number, Lane>()
  /**
   * Lanes forgotten while requests were in flight (a lease let go or lost): leased again before those end,
   * the endpoint gets the same lane back, so its requests in flight still count against its places.
   */
  const leaving = new Map<number, Lane>()
  /** Every lane that may have requests in flight: those held and those let go. */
  const everyLane = () => [...lanes.values(), ...leaving.values()]
  let ended: Ended[] = []
  let inFlight = 0
  const turns = createTurns({
    mayStart: options.mayStart,
    hasRoom: () => inFlight < options.maxInFlight,
    startNext(lane) {
      if (lane.running.size >= capOf(lane) || !lanes.has(lane.id)) return false
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
    let unread = false
    const signal = hangUps.signal
    const attempt = (own: boolean) => {
      if (!own || hangUps.stopped) return undefined
      // Where the read is asynchronous (PostgreSQL), the leases may have stopped being surely this
      // instance's while it ran: the attempt waits in its queue for the next renewal.
      if (signal.aborted || !options.mayStart()) return putBack()
      // Once per attempt taken: one put back after its second read failed starts again uncounted.
      if (!startedOnce.has(claimed)) {
        startedOnce.add(claimed)
        lane.startedSinceStep++
        options.started(claimed)
      }
      return options.run(claimed, signal, stillOwn)
    }
    // Asked again after a slow lookup: a failed read puts the attempt back, as before it started.
    const stillOwn = async (): Promise<boolean> => {
      try {
        return await readOwn(options, claimed, [])
      } catch {
        unreadable()
        return false
      }
    }
    // Back in its queue while the lane is still held.
    const putBack = () => {
      if (lanes.get(lane.id) === lane) putBackInOrder(lane, claimed)
      return undefined
    }
    // A failed read (a lost connection, a deadline): back in its queue, read again REREAD_MS later.
    const unreadable = () => {
      unread = true
      return putBack()
    }
    const own = readOwn(options, claimed, lane.queue)
    const outcome = typeof own === 'boolean' ? attempt(own) : own.then(attempt, unreadable)
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
    if (lane.running.size === 0 && leaving.get(lane.id) === lane) leaving.delete(lane.id)
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

  /**
   * Takes out and returns what these lanes have queued (their endpoints ended); the lanes stay, with their
   * requests in flight, and are let go once idle as any other.
   */
  function unqueue(ids: readonly number[]): ClaimedAttempt[] {
    const queued: ClaimedAttempt[] = []
    for (const id of ids) {
      const lane = lanes.get(id)
      if (!lane) continue
      queued.push(...lane.queue)
      lane.queue = []
      if (lane.running.size === 0) lane.idleSince ??= options.now()
    }
    return queued
  }

  return {
    pump,
    get size() {
      return lanes.size
    },
    /** Lanes for endpoints just leased. */
    add(leased: readonly LeasedEndpoint[], now: number): void {
      for (const endpoint of leased) {
        if (lanes.has(endpoint.id)) continue
        const back = leaving.get(endpoint.id)
        leaving.delete(endpoint.id)
        const lane = back ?? {
          ...endpoint,
          queue: [],
          running: new Map(),
          idleSince: now,
          startedSinceStep: 0,
        }
        lanes.set(endpoint.id, lane)
      }
    },
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
    /**
     * How many attempts each lane should be sent to fill its queue (only lanes running low), by what it
     * started since the step before, or since it was last refilled when it waits for its turn.
     */
    wants(): { endpointId: number; count: number }[] {
      const wants = []
      for (const lane of lanes.values()) {
        const count = wantFor(lane.queue.length, lane.startedSinceStep)
        if (count > 0) wants.push({ endpointId: lane.id, count })
      }
      return wants
    },
    /**
     * A step planned: each lane's count of attempts started begins again, but those of lanes running low
     * whose turn to be refilled is a later step's (`waiting`): their queue, once refilled, must cover the
     * time they waited too.
     */
    counted(waiting: ReadonlySet<number>): void {
      for (const lane of lanes.values()) if (!waiting.has(lane.id)) lane.startedSinceStep = 0
    },
    /** Lanes with nothing queued nor in flight since before `before`. */
    idleSince(before: number): number[] {
      return [...lanes.values()]
        .filter((lane) => lane.idleSince !== undefined && lane.idleSince <= before)
        .map((lane) => lane.id)
    },
    /**
     * Forgets lanes (let go, or their lease was lost): their queued attempts are returned (to give back,
     * when the lease is still this instance's); their attempts in flight end as they will.
     */
    remove(ids: readonly number[]): ClaimedAttempt[] {
      const queued = unqueue(ids)
      for (const id of ids) {
        const lane = lanes.get(id)
        if (!lane) continue
        lanes.delete(id)
        turns.delete(lane)
        if (lane.running.size > 0) leaving.set(id, lane)
      }
      return queued
    },
    unqueue,
    /** Outcomes a step could not write: the next one writes them. */
    giveBackEnded(outcomes: readonly Ended[]): void {
      ended = [...outcomes, ...ended]
    },
    /** What ended since the last call (the step writes it down). */
    takeEnded(): Ended[] {
      const taken = ended
      ended = []
      return taken
    },
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
    ids: () => [...lanes.keys()],
    /** Attempts held per endpoint and not written down yet (the fan-out's gate leaves them out). */
    held: () => heldPerEndpoint(everyLane(), ended),
    /** Whether anything is queued, in flight, or ended (or hung up on) and not yet written down. */
    hasWork: () =>
      ended.length > 0 ||
      hangUps.count > 0 ||
      inFlight > 0 ||
      [...lanes.values()].some((lane) => lane.queue.length > 0),
    /** Every attempt in flight, to wait for at shutdown. */
    running: (): Running[] => everyLane().flatMap((lane) => [...lane.running.values()]),
    /** Aborts every attempt in flight; none is written down (the dispatcher gives them back). */
    abortAll: () => hangUps.abortAll(),
    /** Requests in flight per account (a metric). */
    inFlightByAccount: () => inFlightPerAccount(everyLane()),
  }
}
