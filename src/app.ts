import cors from '@fastify/cors'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify'
import { RateLimitStatus, registerStandingRoute } from './api-keys/standing.routes.js'
import type { Config } from './config.js'
import type { Deps } from './deps.js'
import { ErrorBody } from './http/error.schemas.js'
import { registerErrorHandling } from './http/error-handler.js'
import { answerClientError, createFrameworkErrorHandler } from './http/framework-errors.js'
import { registerGuard } from './http/guard.js'
import { registerHealthRoutes } from './http/health.js'
import { registerIndexRoute } from './http/index-route.js'
import { registerJsonBodyParser } from './http/json-body.js'
import { registerMetricsRoute } from './http/metrics.js'
import { registerOpenApi } from './http/openapi.js'
import { registerReplyHooks } from './http/reply.js'
import { requestIdOf } from './http/request-context.js'
import { createValidatorCompiler } from './http/validation.js'
import { registerOrderRoutes } from './orders/orders.routes.js'
import { orderSchemas } from './orders/orders.schemas.js'
import { registerPetLifecycleRoutes } from './pets/pets.lifecycle.routes.js'
import { registerPetRoutes } from './pets/pets.routes.js'
import { petSchemas } from './pets/pets.schemas.js'

const BODY_LIMIT_BYTES = 64 * 1024

/** Headers browser code may read on a cross-origin response (contract §9). */
export const EXPOSED_HEADERS = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'Link',
  'Deprecation',
  'Sunset',
  'X-Request-Id',
  'Idempotent-Replayed',
  'ETag',
]

/**
 * CORS for the configured origins. Only a real preflight (OPTIONS with Access-Control-Request-Method)
 * is answered by the plugin; any other OPTIONS falls through to the 405 the API gives without CORS.
 */
async function registerCors(app: FastifyInstance, origins: readonly string[]): Promise<void> {
  const options = {
    origin: [...origins],
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-Match', 'X-Request-Id'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  }
  await app.register(cors, {
    delegator: (request, callback) => {
      const preflight =
        request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined
      callback(null, { ...options, preflight })
    },
  })
}

/** Fastify takes a hop count as a function: trust the first `hops` proxies from the socket inwards. */
function trustProxyOption(
  trust: Config['trustProxy'],
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust === 'number') return (_address, hop) => hop < trust
  return typeof trust === 'boolean' ? trust : [...trust]
}

/** Builds the HTTP application on the given dependencies. It never listens: main.ts and tests do. */
export async function buildApp(deps: Deps): Promise<FastifyInstance> {
  const { config } = deps
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    genReqId: requestIdOf,
    // One line per request from reply.ts instead of Fastify's two, and no child logger per request
    // (pino builds one for every request, logged or not): lines that concern a request name its reqId.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: (logger) => logger,
    bodyLimit: BODY_LIMIT_BYTES,
    // Longer than any URL Node accepts: an over-long petId reaches validation and gets its 400.
    routerOptions: { maxParamLength: 16 * 1024 },
    frameworkErrors: createFrameworkErrorHandler(deps),
    clientErrorHandler: answerClientError,
    // While draining, a request that arrives on an open connection is served (with Connection: close), not
    // refused with a bare 503: the client had sent it, and it may not be safe to send again.
    return503OnClosing: false,
    trustProxy: trustProxyOption(config.trustProxy),
    // Slow clients (slow-loris) cannot hold a connection: headers and the whole request must arrive in
    // time, or the connection gets 408 and is closed. Node checks the deadlines at this interval.
    requestTimeout: config.requestTimeoutMs,
    http: {
      headersTimeout: config.headersTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, config.headersTimeoutMs),
    },
  })
  const sharedSchemas = [...petSchemas, ...orderSchemas, RateLimitStatus, ErrorBody]
  for (const schema of sharedSchemas) app.addSchema(schema)
  app.setValidatorCompiler(createValidatorCompiler(sharedSchemas))

  registerJsonBodyParser(app)
  registerErrorHandling(app)
  // One hook per stage of a request: the guard (onRequest), headers (onSend), log and metrics (onResponse).
  registerReplyHooks(app, deps)
  // CORS answers preflights before the guard; the guard comes before the docs page's plugin, since a
  // hook reaches only the plugins registered after it.
  if (config.corsOrigins.length > 0) await registerCors(app, config.corsOrigins)
  registerGuard(app, deps)
  await registerOpenApi(app, config)
  registerPetRoutes(app, deps)
  registerPetLifecycleRoutes(app, deps)
  registerOrderRoutes(app, deps)
  registerStandingRoute(app)
  registerHealthRoutes(app, deps)
  registerIndexRoute(app, config)
  // With METRICS_PORT set, main.ts serves /metrics on that port instead.
  if (config.metricsPort === undefined) registerMetricsRoute(app, deps.metrics)
  return app
}
