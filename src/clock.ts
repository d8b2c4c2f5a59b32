/** Time as a dependency, so windows, expiries and the sunset date are tested without waiting. */
export interface Clock {
  /** Milliseconds since the Unix epoch: this host's wall clock, which NTP or a VM's resume may step. */
  now(): number
  /**
   * Milliseconds from an arbitrary origin, never stepped: how long passed in this process, whatever the
   * wall clock was set to meanwhile. Only for intervals measured here (never stored nor compared with a
   * stored time): a lease fence timed by the wall clock stopped renewing while the clock was set back.
   */
  monotonic(): number
}

export const systemClock: Clock = { now: () => Date.now(), monotonic: () => performance.now() }
