import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Clock } from '../clock.js'
import type { Config } from '../config.js'
import { AppError } from '../errors.js'
import type { Limits, RateLimitStore } from '../rate-limit/rate-limit.port.js'
import { retryAfterOf } from '../rate-limit/windows.js'
import { annotate, tracingEnabled } from '../tracing/tracing.js'
import { registerCors } from './cors.js'
import { notFoundHandler } from './error-handler.js'
import { type GuardDeps, rateLimitAttributes, registerGuard } from './guard.js'
import { registerIndexRoute } from './index-route.js'
import { serveOpenApi } from './openapi.js'
import { registerApiHeaders } from './reply.js'
import { trackAllowedMethods } from './route-table.js'

type Routes = (scope: FastifyInstance) => void | Promise<void>

/**
 * The API: one encapsulated scope under /v1 whose hooks are CORS, the guard and the API's headers, and
 * whose not-found handler answers 404 or 405 with `Allow` read from its routes. Every route `routes`
 * registers is authenticated, limited and headed because it is registered here; nothing lists paths.
 */
export async function registerApiScope(
  app: FastifyInstance,
  deps: GuardDeps & { config: Config },
  routes: Routes,
): Promise<void> {
  await app.register(
    async (scope) => {
      const allowedMethods = trackAllowedMethods(scope)
      scope.setNotFoundHandler(notFoundHandler(allowedMethods))
      if (deps.config.corsOrigins.length > 0) await registerCors(scope, deps.config.corsOrigins)
      registerGuard(scope, deps)
      registerApiHeaders(scope, deps.clock)
      await routes(scope)
    },
    { prefix: '/v1' },
  )
}

interface PublicDeps {
  config: Config
  rateLimitStore: RateLimitStore
  clock: Clock
}

/**
 * What a client reaches without a key (CONTRACT §12, §15): the index, the OpenAPI document, the docs page,
 * the pages `routes` registers (the partner dashboard) and the 404 of any path outside the API, in one
 * scope limited per client IP (PETSTORE_PUBLIC_PER_MINUTE).
 */
export async function registerPublicScope(
  app: FastifyInstance,
  deps: PublicDeps,
  routes: Routes = () => {},
): Promise<void> {
  await app.register(async (scope) => {
    scope.setNotFoundHandler(notFoundHandler())
    if (deps.config.corsOrigins.length > 0) await registerCors(scope, deps.config.corsOrigins)
    const limits = publicLimits(deps.config.publicPerMinute)
    scope.addHook('onRequest', (request, _reply, done) => {
      try {
        const pending = limitPublicSurface(request, { ...deps, limits })
        if (pending) pending.then(() => done(), done)
        else done()
      } catch (error) {
        done(error as Error)
      }
    })
    registerIndexRoute(scope, deps.config)
    await serveOpenApi(scope, deps.config)
    await routes(scope)
  })
}

/** Per client IP and minute; the day window is set far out of reach (a minute's limit over a whole day). */
function publicLimits(perMinute: number): Limits {
  return { perMinute, perDay: perMinute * 24 * 60 }
}

/**
 * Counts a public request on the same store as the API's limits (shared by every instance with Redis),
 * under a subject of its own. Throws the 429; resolves when the request may go on.
 */
function limitPublicSurface(
  request: FastifyRequest,
  deps: { rateLimitStore: RateLimitStore; clock: Clock; limits: Limits },
): Promise<void> | undefined {
  const decided = deps.rateLimitStore.consume(`public:${request.ip}`, deps.limits, deps.clock.now())
  const settle = (decision: Awaited<typeof decided>) => {
    if (tracingEnabled()) annotate(rateLimitAttributes(decision))
    if (decision.outcome === 'allowed') return
    const retryAfter = retryAfterOf(decision)
    throw new AppError(
      'rate_limited',
      `this client sent more than ${deps.limits.perMinute} requests a minute without an API key; retry in ${retryAfter} seconds`,
      { 'retry-after': retryAfter },
    )
  }
  if (decided instanceof Promise) return decided.then(settle)
  settle(decided)
  return undefined
}
