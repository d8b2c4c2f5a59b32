import type { ClaimedAttempt } from './attempts.repository.js'
import { idleBefore, type Lane, laneFor, longestHeld, wantsOf } from './lane.js'
import type { LeasedEndpoint } from './leases.repository.js'

/**
 * Which lanes a dispatcher holds (one per leased endpoint), and those it let go while requests to them
 * were still in flight (`leaving`): leased again before those end, the endpoint gets the same lane back,
 * so its requests in flight still count against its places. `lanes.ts` runs what is in them.
 */
export function createLaneSet(now: () => number, forgotten: (lane: Lane) => void) {
  const held = new Map<number, Lane>()
  const leaving = new Map<number, Lane>()

  /**
   * Takes out and returns what these lanes have queued; the lanes stay, with their requests in flight, and
   * are let go once idle as any other.
   */
  function unqueue(ids: readonly number[]): ClaimedAttempt[] {
    const queued: ClaimedAttempt[] = []
    for (const id of ids) {
      const lane = held.get(id)
      if (!lane) continue
      queued.push(...lane.queue)
      lane.queue = []
      if (lane.running.size === 0) lane.idleSince ??= now()
    }
    return queued
  }

  /**
   * These lanes go, as lanes making room do: their queued attempts are returned (to give back), they are
   * refilled no more, and once idle they are let go.
   */
  function retire(ids: readonly number[]): ClaimedAttempt[] {
    for (const id of ids) {
      const lane = held.get(id)
      if (lane) lane.rotating = true
    }
    return unqueue(ids)
  }

  return {
    held,
    /** Every lane that may have requests in flight: those held and those let go. */
    every: (): Lane[] => [...held.values(), ...leaving.values()],
    /** Whether this lane (not another since leased for its endpoint) is still held. */
    holds: (lane: Lane): boolean => held.get(lane.id) === lane,
    /** A lane let go has nothing in flight any more: it is forgotten for good. */
    drained(lane: Lane): void {
      if (lane.running.size === 0 && leaving.get(lane.id) === lane) leaving.delete(lane.id)
    },
    /** Lanes for endpoints just leased (one let go with requests in flight comes back). */
    add(leased: readonly LeasedEndpoint[], at: number): void {
      for (const endpoint of leased) {
        if (held.has(endpoint.id)) continue
        const back = leaving.get(endpoint.id)
        leaving.delete(endpoint.id)
        held.set(
          endpoint.id,
          back ? Object.assign(back, { leasedAt: at, rotating: false }) : laneFor(endpoint, at),
        )
      }
    },
    /**
     * Forgets lanes (let go, or their lease was lost): their queued attempts are returned (to give back,
     * when the lease is still this instance's); their attempts in flight end as they will.
     */
    remove(ids: readonly number[]): ClaimedAttempt[] {
      const queued = unqueue(ids)
      for (const id of ids) {
        const lane = held.get(id)
        if (!lane) continue
        held.delete(id)
        forgotten(lane)
        if (lane.running.size > 0) leaving.set(id, lane)
      }
      return queued
    },
    unqueue,
    /**
     * Sends up to `count` lanes leased before `before` on their way out, the longest held first, to make
     * room for endpoints that wait: their queued attempts are returned (to give back), they are refilled no
     * more, and once idle they are let go as any other (never while requests to them are in flight, so no
     * other instance sends beside those).
     */
    rotate(before: number, count: number): ClaimedAttempt[] {
      return retire(longestHeld(held.values(), before, count).map((lane) => lane.id))
    },
    retire,
    rotating: () => [...held.values()].filter((lane) => lane.rotating).length,
    wants: () => wantsOf(held.values()),
    /**
     * A step planned: each lane's count of attempts started begins again, but those of lanes running low
     * whose turn to be refilled is a later step's (`waiting`): their queue, once refilled, must cover the
     * time they waited too.
     */
    counted(waiting: ReadonlySet<number>): void {
      for (const lane of held.values()) if (!waiting.has(lane.id)) lane.startedSinceStep = 0
    },
    idleSince: (before: number) => idleBefore(held.values(), before),
    ids: () => [...held.keys()],
  }
}
