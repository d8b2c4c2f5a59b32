import type { Decision, Limits, RateLimitStore } from './rate-limit.port.js'

export interface FallbackEvents {
  /** Called on every decision the fallback makes; `first` when the primary had been answering until now. */
  onFallback(error: unknown, first: boolean): void
  /** Called once when the primary answers again. */
  onRecovery(): void
}

/**
 * The shared store (Redis) while it answers; while it does not, the in-process store, so limits hold per
 * instance and no request fails because the limiter's store is down. Recovery needs no restart.
 */
export function withFallback(
  primary: RateLimitStore,
  fallback: RateLimitStore,
  events: FallbackEvents,
): RateLimitStore {
  let degraded = false

  async function decide(call: (store: RateLimitStore) => Decision | Promise<Decision>): Promise<Decision> {
    try {
      const decision = await call(primary)
      if (degraded) {
        degraded = false
        events.onRecovery()
      }
      return decision
    } catch (error) {
      events.onFallback(error, !degraded)
      degraded = true
      return call(fallback)
    }
  }

  return {
    shared: primary.shared,
    consume: (subject: string, limits: Limits, now: number) =>
      decide((store) => store.consume(subject, limits, now)),
    peek: (subject: string, limits: Limits, now: number) =>
      decide((store) => store.peek(subject, limits, now)),
    reset: async (subject: string) => {
      await Promise.allSettled([primary.reset(subject), fallback.reset(subject)])
    },
    close: async () => {
      await Promise.allSettled([primary.close(), fallback.close()])
    },
  }
}
