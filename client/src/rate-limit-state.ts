/**
 * What the service said about the API key's rate limit. On every response: `limit`, `remaining` and
 * `reset` (X-RateLimit-*). On a failed call, also `retryAfter` (Retry-After) and `retryAt`.
 */
export interface RateLimitState {
  /** Requests allowed in the window with the fewest left (per minute or per day). */
  limit?: number
  /** Requests left in that window; 0 during a ban. */
  remaining?: number
  /** Unix time in seconds, on the service's clock, at which `remaining` goes back up (or a ban ends). */
  reset?: number
  /** Seconds the service asked the client to wait before sending again (Retry-After). */
  retryAfter?: number
  /** Milliseconds since the epoch, on the client's clock, when it may send again: now + Retry-After. */
  retryAt?: number
}

const WHOLE_NUMBER = /^\d{1,15}$/

function wholeNumber(text: string | null): number | undefined {
  return text !== null && WHOLE_NUMBER.test(text) ? Number(text) : undefined
}

/** The X-RateLimit-* headers of a response; undefined when it carries none (not an API response). */
export function readRateLimit(headers: Headers): RateLimitState | undefined {
  const state: RateLimitState = {
    limit: wholeNumber(headers.get('x-ratelimit-limit')),
    remaining: wholeNumber(headers.get('x-ratelimit-remaining')),
    reset: wholeNumber(headers.get('x-ratelimit-reset')),
  }
  return Object.values(state).some((value) => value !== undefined) ? state : undefined
}

/** Retry-After in milliseconds: delta-seconds, or an HTTP date (RFC 9110); undefined when absent. */
export function readRetryAfterMs(headers: Headers, now: number): number | undefined {
  return parseRetryAfter(headers.get('retry-after'), now)
}

/**
 * A Retry-After value in milliseconds from `now`: delta-seconds, or an HTTP date (RFC 9110; a past one is
 * 0). Undefined when absent or unreadable. The one reading of it, the client's and the service's webhook
 * sender's.
 *
 * @example parseRetryAfter('7', Date.now()) // 7000
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  const text = value?.trim() ?? null
  const seconds = wholeNumber(text)
  if (seconds !== undefined) return seconds * 1000
  // An HTTP date has a day or month name; without one, V8 would read `-5` as a date too.
  const date = text !== null && /[a-z]/i.test(text) ? Date.parse(text) : Number.NaN
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}
