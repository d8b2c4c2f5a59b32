import type { FastifyInstance } from 'fastify'
import { limitsFor } from '../api-keys/api-keys.plans.js'
import type { Clock } from '../clock.js'
import { AppError } from '../errors.js'
import { rateLimitHeaders } from '../rate-limit/rate-limit.headers.js'
import type { Decision, RateLimitStore } from '../rate-limit/rate-limit.port.js'
import { ipSubject, keySubject } from '../rate-limit/subjects.js'
import type { Metrics } from './metrics.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The limiter's decision for this API request; null elsewhere. */
    rateLimit: Decision | null
  }
}

const FREE_LIMITS = limitsFor('free')

/**
 * Counts every API request: per key when the key is valid, else per client IP with the Free numbers
 * (so keys cannot be guessed at speed). Runs after the key is identified and before it is required,
 * so 401s are counted and carry the headers too. Headers are written in onSend, on every status.
 */
export function registerRateLimit(
  app: FastifyInstance,
  deps: { store: RateLimitStore; clock: Clock; metrics: Metrics },
): void {
  const { store, clock, metrics } = deps
  app.decorateRequest('rateLimit', null)

  app.addHook('onRequest', async (request) => {
    if (!request.apiRequest) return
    const key = request.apiKey
    const pending = key
      ? store.consume(keySubject(key.id), key.limits, clock.now())
      : store.consume(ipSubject(request.ip), FREE_LIMITS, clock.now())
    const decision = pending instanceof Promise ? await pending : pending
    request.rateLimit = decision
    if (decision.outcome === 'allowed') return
    metrics.rateLimitRefusals.inc({ reason: decision.outcome, subject: key ? 'key' : 'ip' })
    throw refusal(decision, key ? 'this API key' : 'this client')
  })

  app.addHook('onSend', async (request, reply) => {
    if (request.rateLimit) reply.headers(rateLimitHeaders(request.rateLimit, clock.now()))
  })
}

function refusal(decision: Exclude<Decision, { outcome: 'allowed' }>, who: string): AppError {
  const retryAfter = String(Math.max(1, Math.ceil(decision.retryAfterMs / 1000)))
  if (decision.outcome === 'banned') {
    return new AppError(
      'key_banned',
      `${who} is banned for ${retryAfter} more seconds for sending requests after being rate limited`,
      { 'retry-after': retryAfter },
    )
  }
  const window = decision.refusedBy
  return new AppError(
    'rate_limited',
    `per-${window.name} limit of ${window.limit} requests reached; retry in ${retryAfter} seconds`,
    { 'retry-after': retryAfter },
  )
}
