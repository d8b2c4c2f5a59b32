import type { Decision, Limits, RateLimitStore } from './rate-limit.port.js'

export interface FallbackEvents {
  /** Called on every decision the fallback makes; `first` when the primary had been answering until now. */
  onFallback(error: unknown, first: boolean): void
  /** Called once when the primary answers again. */
  onRecovery(): void
}

/** Misses in a row after which requests stop waiting for the primary (CONTRACT §13). */
export const MISSES_BEFORE_SKIPPING = 3
/** How often, while skipped, a background probe asks whether the primary answers again. */
export const PROBE_INTERVAL_MS = 1000

/**
 * The shared store (Redis) while it answers; while it does not (an error, or no answer within its
 * deadline), the in-process store, so limits hold per instance and no request fails or waits long
 * because the limiter's store is down or stalled. After 3 misses in a row requests stop asking the primary
 * at all (a circuit breaker): a probe asks it about once a second, and its first answer makes the limits
 * shared again. Recovery needs no restart.
 */
export function withFallback(
  primary: RateLimitStore & { ping(): Promise<unknown> },
  fallback: RateLimitStore,
  events: FallbackEvents,
): RateLimitStore {
  let degraded = false
  let misses = 0
  let probe: NodeJS.Timeout | undefined

  function recovered(): void {
    misses = 0
    if (!degraded) return
    degraded = false
    events.onRecovery()
  }

  function missed(error: unknown): void {
    events.onFallback(error, !degraded)
    degraded = true
    if (++misses >= MISSES_BEFORE_SKIPPING && !probe) {
      probe = setInterval(() => {
        primary.ping().then(
          () => {
            clearInterval(probe)
            probe = undefined
            recovered()
          },
          () => {},
        )
      }, PROBE_INTERVAL_MS)
      probe.unref()
    }
  }

  async function decide(call: (store: RateLimitStore) => Decision | Promise<Decision>): Promise<Decision> {
    if (probe) {
      events.onFallback(undefined, false)
      return call(fallback)
    }
    try {
      const decision = await call(primary)
      recovered()
      return decision
    } catch (error) {
      missed(error)
      return call(fallback)
    }
  }

  return {
    get shared() {
      return !degraded
    },
    consume: (subject: string, limits: Limits, now: number) =>
      decide((store) => store.consume(subject, limits, now)),
    peek: (subject: string, limits: Limits, now: number) =>
      decide((store) => store.peek(subject, limits, now)),
    reset: async (subject: string) => {
      await Promise.allSettled([primary.reset(subject), fallback.reset(subject)])
    },
    close: async () => {
      clearInterval(probe)
      await Promise.allSettled([primary.close(), fallback.close()])
    },
  }
}
