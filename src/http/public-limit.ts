import type { FastifyRequest } from 'fastify'
import type { Clock } from '../clock.js'
import { AppError } from '../errors.js'
import type { Limits, RateLimitStore } from '../rate-limit/rate-limit.port.js'
import { INDEX_PATHS } from './index-route.js'
import { retryAfterOf } from './reply.js'

/** The unauthenticated surface a client can reach without a key (the health probes are not part of it). */
export function isPublicSurface(request: FastifyRequest): boolean {
  const route = request.routeOptions.url
  if (route === undefined) return false
  return (
    route === '/v1/openapi.json' ||
    route.startsWith('/v1/docs') ||
    (INDEX_PATHS as readonly string[]).includes(route)
  )
}

/** Per client IP and minute; the day window is set far out of reach (a minute's limit over a whole day). */
export function publicLimits(perMinute: number): Limits {
  return { perMinute, perDay: perMinute * 24 * 60 }
}

/**
 * CONTRACT §12: the documents and the docs page are limited per client IP (PETSTORE_PUBLIC_PER_MINUTE), on
 * the same store as the API's limits (shared by every instance with Redis), under a subject of their own.
 * Throws the 429; resolves when the request may go on.
 */
export function limitPublicSurface(
  request: FastifyRequest,
  deps: { rateLimitStore: RateLimitStore; clock: Clock; publicLimits: Limits },
): Promise<void> | undefined {
  const decided = deps.rateLimitStore.consume(`public:${request.ip}`, deps.publicLimits, deps.clock.now())
  const settle = (decision: Awaited<typeof decided>) => {
    if (decision.outcome === 'allowed') return
    const retryAfter = retryAfterOf(decision)
    throw new AppError(
      'rate_limited',
      `this client sent more than ${deps.publicLimits.perMinute} requests a minute for the documentation; retry in ${retryAfter} seconds`,
      { 'retry-after': retryAfter },
    )
  }
  if (decided instanceof Promise) return decided.then(settle)
  settle(decided)
  return undefined
}
