import { setTimeout } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { redactUrl } from '../redact-url.js'
import { causeInWords } from '../startup-errors.js'
import { inSpan, SpanKind, tracingEnabled } from '../tracing/tracing.js'
import type { BanPolicy, Decision, Limits, RateLimitStore } from './rate-limit.port.js'
import { CONSUME_SCRIPT } from './redis-consume.js'
import { windowStates } from './windows.js'

type ScriptResult = [
  outcome: number,
  minuteCount: number,
  dayCount: number,
  refusedBy: number,
  retryAfterMs: number,
  bannedUntil: number,
]

/** How long start-up waits for Redis before it gives up (and the service does not start). */
export const STARTUP_WAIT_MS = 2_000

interface ScriptedRedis extends Redis {
  petstoreRateLimit(key: string, ...args: (string | number)[]): Promise<ScriptResult>
}

const REDIS_SPAN = { 'db.system.name': 'redis', 'db.operation.name': 'EVALSHA' }

/**
 * The shared store: one atomic Lua script per request on one hash per subject, so any number of
 * instances together never admit more than the plan allows. The key is hash-tagged (`{subject}`), so
 * it works on Redis Cluster; it expires when its day (or its ban) ends.
 */
export async function createRedisStore(
  url: string,
  policy: BanPolicy,
  timeoutMs: number,
): Promise<RateLimitStore & { redis: Redis; ping(): Promise<unknown> }> {
  // No offline queue: while Redis is unreachable a command fails at once instead of holding a request,
  // and ioredis keeps reconnecting in the background. A command Redis does not answer within `timeoutMs`
  // (a stalled Redis, a partition) fails too. Either surfaces as a failed command, which the caller
  // handles (withFallback decides on the in-process store).
  // Auto-pipelining: the commands of one turn of the event loop go out in one write (under load, one
  // system call for many requests' limits instead of one each).
  const options = {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    commandTimeout: timeoutMs,
    enableAutoPipelining: true,
  }
  const redis = new Redis(url, options) as ScriptedRedis
  redis.defineCommand('petstoreRateLimit', { numberOfKeys: 1, lua: CONSUME_SCRIPT })
  let lastError: unknown
  redis.on('error', (error) => {
    lastError = error
  })
  // Start-up waits a moment for Redis: a Redis that cannot be reached then stops the start (CONTRACT §1),
  // one line naming REDIS_URL. Later, an unreachable Redis is the caller's fallback.
  // (Not events.once: it rejects on the 'error' events of failed connection attempts.)
  const ready = new Promise<boolean>((resolve) => redis.once('ready', () => resolve(true)))
  if (!(await Promise.race([ready, setTimeout(STARTUP_WAIT_MS, false, { ref: false })]))) {
    redis.disconnect()
    const cause = lastError ? causeInWords(lastError) : `no answer within ${STARTUP_WAIT_MS / 1000} s`
    throw new Error(`REDIS_URL ${redactUrl(url)}: ${cause}`)
  }

  /** One decision, in a CLIENT span when tracing is on (the Lua script's one round trip). */
  const run = (subject: string, limits: Limits, now: number, count: boolean): Promise<Decision> => {
    if (!tracingEnabled()) return decide(subject, limits, now, count)
    const attributes = { ...REDIS_SPAN, 'petstore.rate_limit.counted': count }
    return inSpan('redis rate-limit', attributes, () => decide(subject, limits, now, count), {
      kind: SpanKind.CLIENT,
    })
  }

  async function decide(subject: string, limits: Limits, now: number, count: boolean): Promise<Decision> {
    const [outcome, minute, day, refusedBy, retryAfterMs, bannedUntil] = await redis.petstoreRateLimit(
      `petstore:rl:{${subject}}`,
      now,
      limits.perMinute,
      limits.perDay,
      Number.isFinite(policy.banAfter) ? policy.banAfter : 2 ** 52,
      policy.banMs,
      count ? 1 : 0,
    )
    const windows = windowStates(limits, { minute, day }, now)
    if (outcome === 2) return { outcome: 'banned', windows, bannedUntil, retryAfterMs }
    if (outcome === 1) {
      const refusedWindow = windows[refusedBy] ?? windows[0]
      if (!refusedWindow) throw new Error('rate-limit script returned no window')
      return { outcome: 'limited', windows, refusedBy: refusedWindow, retryAfterMs }
    }
    return { outcome: 'allowed', windows }
  }

  return {
    shared: true,
    redis,
    consume: (subject, limits, now) => run(subject, limits, now, true),
    peek: (subject, limits, now) => run(subject, limits, now, false),
    ping: () => redis.ping(),
    reset: async (subject) => {
      await redis.del(`petstore:rl:{${subject}}`)
    },
    close: async () => {
      await redis.quit().catch(() => redis.disconnect())
    },
  }
}
