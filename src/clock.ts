/** Time as a dependency, so windows, expiries and the sunset date are tested without waiting. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }
