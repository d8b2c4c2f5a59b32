/** How retries spread out: exponential steps with full jitter, capped. */
export interface BackoffPolicy {
  /** The first step in milliseconds; each retry doubles it. */
  baseDelayMs: number
  /** The largest step in milliseconds. */
  maxDelayMs: number
  /** A number in [0, 1): Math.random unless injected. */
  random: () => number
}

/**
 * "Full jitter": a random delay from 0 up to min(maxDelayMs, baseDelayMs · 2^attempt), so clients that
 * failed together do not retry together.
 *
 * @example backoffDelay(2, { baseDelayMs: 500, maxDelayMs: 20_000, random: Math.random }) // 0 to 2,000
 */
export function backoffDelay(attempt: number, policy: BackoffPolicy): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt)
  return Math.floor(policy.random() * ceiling)
}

/**
 * The wait before retry number `attempt + 1`: never less than what Retry-After asked for, plus the
 * jittered backoff on top.
 */
export function retryDelay(attempt: number, retryAfterMs: number | undefined, policy: BackoffPolicy): number {
  return (retryAfterMs ?? 0) + backoffDelay(attempt, policy)
}
