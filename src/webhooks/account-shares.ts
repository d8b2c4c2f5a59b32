import type { Lane } from './lane.js'

/**
 * Requests in flight per account, across every lane this dispatcher runs (those held and those let go with
 * requests still in flight), against the account's share: `cap`, what its endpoints may hold at once
 * (MAX_IN_FLIGHT_PER_ACCOUNT). An account that deletes endpoints whose requests hang and makes new ones
 * gets no more: the deleted ones' requests still count until they end. A lane whose turn comes while its
 * account is at its share waits, out of the turns, until one of the account's requests ends.
 */
export function createAccountShares(cap: number) {
  const inFlight = new Map<number, number>()
  const waiting = new Map<number, Set<Lane>>()
  return {
    /** Whether the lane's account may start one more request; if not, the lane waits for one to end. */
    admits(lane: Lane): boolean {
      if ((inFlight.get(lane.accountId) ?? 0) < cap) return true
      const lanes = waiting.get(lane.accountId) ?? new Set()
      waiting.set(lane.accountId, lanes.add(lane))
      return false
    },
    started(accountId: number): void {
      inFlight.set(accountId, (inFlight.get(accountId) ?? 0) + 1)
    },
    /** One of the account's requests ended: the lanes that waited for it, to take their turns again. */
    ended(accountId: number): Iterable<Lane> {
      const count = (inFlight.get(accountId) ?? 1) - 1
      if (count > 0) inFlight.set(accountId, count)
      else inFlight.delete(accountId)
      const lanes = waiting.get(accountId)
      waiting.delete(accountId)
      return lanes ?? []
    },
    /** Requests in flight per account (a metric). */
    inFlight: (): Map<number, number> => new Map(inFlight),
  }
}
