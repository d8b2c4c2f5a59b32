/** Delays before attempts 2 to 8 (Svix's schedule, CONTRACT §14); after the 8th the delivery has failed. */
export const RETRY_DELAYS_MS = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000].map((seconds) => seconds * 1000)
/** A receiver's Retry-After is honoured up to an hour. */
export const RETRY_AFTER_CAP_MS = 60 * 60 * 1000
/** Each delay is moved by up to this share either way, so that a burst of failures does not retry in step. */
export const JITTER = 0.2
/** An endpoint whose deliveries have all failed this long is disabled. */
export const FAILING_DISABLES_AFTER_MS = 5 * 24 * 60 * 60 * 1000

/**
 * Failed attempts in a row (since the endpoint's last success) from which its circuit is open: one
 * request at a time until one succeeds (lanes.ts).
 */
export const CIRCUIT_OPENS_AFTER = 5

export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1

/**
 * When the attempt after attempt number `attempt` (1-based) may start, as a delay in ms, or undefined when
 * `attempt` was the last. `retryAfterMs` (a 429 or 503's Retry-After) is a floor, capped at an hour; `scale`
 * multiplies everything (PETSTORE_WEBHOOK_RETRY_SCALE).
 */
export function retryDelayMs(
  attempt: number,
  options: { scale: number; retryAfterMs?: number | undefined; random?: () => number },
): number | undefined {
  const base = RETRY_DELAYS_MS[attempt - 1]
  if (base === undefined) return undefined
  const random = options.random ?? Math.random
  const jittered = base * (1 + JITTER * (2 * random() - 1))
  const floor = Math.min(options.retryAfterMs ?? 0, RETRY_AFTER_CAP_MS)
  return Math.round(Math.max(jittered, floor) * options.scale)
}

/** Whether an endpoint subscribed with `patterns` (`pet.updated`, `order.*`, `*`) takes events of `type`. */
export function subscribes(patterns: readonly string[], type: string): boolean {
  return patterns.some(
    (pattern) =>
      pattern === '*' ||
      pattern === type ||
      (pattern.endsWith('.*') && type.startsWith(pattern.slice(0, -1))),
  )
}
