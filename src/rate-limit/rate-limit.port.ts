/** Requests a subject may make per window: a plan's numbers, or an Enterprise key's own. */
export interface Limits {
  readonly perMinute: number
  readonly perDay: number
}

export type WindowName = 'minute' | 'day'

/** One window of a subject as it stands after a decision. Times are Unix milliseconds. */
export interface WindowState {
  name: WindowName
  limit: number
  remaining: number
  /** The instant this window ends and `remaining` goes back up to `limit`. */
  resetAt: number
  lengthMs: number
}

export type Decision =
  | { outcome: 'allowed'; windows: WindowState[] }
  | { outcome: 'limited'; windows: WindowState[]; refusedBy: WindowState; retryAfterMs: number }
  | { outcome: 'banned'; windows: WindowState[]; bannedUntil: number; retryAfterMs: number }

/** When a subject's refusals turn into a ban. */
export interface BanPolicy {
  /** Refusals inside one window after which the next refusal starts a ban. */
  banAfter: number
  banMs: number
}

/**
 * Where rate-limit state lives. One call decides a request: both windows, the ban and the refusal
 * count change together or not at all, so a refused request consumes nothing.
 * Results may be synchronous (in-process) or a promise (a network store).
 */
export interface RateLimitStore {
  /** True when every instance of the service sees the same counts (a network store). */
  readonly shared: boolean
  /** Admits or refuses one request of `subject` at `now`, counting it only when admitted. */
  consume(subject: string, limits: Limits, now: number): Decision | Promise<Decision>
  /** The decision the next request would get, without counting anything. */
  peek(subject: string, limits: Limits, now: number): Decision | Promise<Decision>
  /** Forgets a subject: counts, refusals and ban. */
  reset(subject: string): void | Promise<void>
  close(): Promise<void>
}
