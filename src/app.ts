import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify'
import { RateLimitStatus, registerStandingRoute } from './api-keys/standing.routes.js'
import { registerUsageRoute, Usage, UsageDay } from './api-keys/usage.routes.js'
import { readBuiltDashboard } from './dashboard/assets.js'
import { registerDashboardRoutes } from './dashboard/dashboard.routes.js'
import type { Deps } from './deps.js'
import { registerAccessLog } from './http/access-log.js'
import { answerClientError } from './http/client-error.js'
import { BODY_LIMIT_BYTES, ErrorBody } from './http/error.schemas.js'
import { registerErrorHandler } from './http/error-handler.js'
import { registerHealthRoutes } from './http/health.js'
import { registerJsonBodyParser } from './http/json-body.js'
import { registerMetricsRoute } from './http/metrics.js'
import { registerOpenApi } from './http/openapi.js'
import { refuseDuplicateHosts } from './http/public-url.js'
import { registerCommonHeaders } from './http/reply.js'
import { requestIdOf } from './http/request-context.js'
import { refuseMalformedTargets, routableTarget } from './http/request-target.js'
import { registerApiScope, registerPublicScope } from './http/scopes.js'
import { sharedSerializers } from './http/serializers.js'
import { trustFunctionOf } from './http/trust-proxy.js'
import { createValidatorCompiler } from './http/validation.js'
import { registerOrderRoutes } from './orders/orders.routes.js'
import { orderSchemas } from './orders/orders.schemas.js'
import { registerPetLifecycleRoutes } from './pets/pets.lifecycle.routes.js'
import { registerPetRoutes } from './pets/pets.routes.js'
import { petSchemas } from './pets/pets.schemas.js'
import { registerEventRoutes } from './webhooks/events.routes.js'
import { registerWebhookRoutes } from './webhooks/webhooks.routes.js'
import { webhookSchemas } from './webhooks/webhooks.schemas.js'

/**
 * Builds the HTTP application on the given dependencies. It never listens: server.ts and tests do.
 *
 * Every request takes one straight line. At the root: the target made routable (request-target.ts), one
 * Host, then the hooks of the scope its route (or not-found handler) was registered in: the API scope under
 * /v1 (CORS, the guard, the API's headers) or the public scope (CORS, a per-IP limit); the health probes and
 * /metrics are in neither. With tracing on (`options.tracing`, tracing/sdk.ts) its span wraps all of it. Whatever it ends with, the root error handler writes the Error body, the root
 * onSend the common headers, and the root onResponse the log line and the metrics.
 */
export async function buildApp(
  deps: Deps,
  options: { tracing?: ((app: FastifyInstance) => Promise<void>) | undefined } = {},
): Promise<FastifyInstance> {
  const { config } = deps
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    genReqId: requestIdOf,
    // One line per request from access-log.ts instead of Fastify's two, and no child logger per request
    // (pino builds one for every request, logged or not): lines that concern a request name its reqId.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: (logger) => logger,
    bodyLimit: BODY_LIMIT_BYTES,
    // Longer than any URL Node accepts: an over-long petId reaches validation and gets its 400.
    routerOptions: { maxParamLength: 16 * 1024 },
    rewriteUrl: routableTarget,
    clientErrorHandler: answerClientError,
    // While draining, a request that arrives on an open connection is served (with Connection: close), not
    // refused with a bare 503: the client had sent it, and it may not be safe to send again.
    return503OnClosing: false,
    trustProxy: trustFunctionOf(config.trustProxy),
    // Slow clients (slow-loris) cannot hold a connection: headers and the whole request must arrive in
    // time, or the connection gets 408 and is closed. Node checks the deadlines at this interval.
    requestTimeout: config.requestTimeoutMs,
    http: {
      headersTimeout: config.headersTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, config.headersTimeoutMs),
    },
    schemaController: { compilersFactory: { buildSerializer: sharedSerializers() } },
  })
  const sharedSchemas = [
    ...petSchemas,
    ...orderSchemas,
    ...webhookSchemas,
    RateLimitStatus,
    UsageDay,
    Usage,
    ErrorBody,
  ]
  for (const schema of sharedSchemas) app.addSchema(schema)
  app.setValidatorCompiler(createValidatorCompiler(sharedSchemas))

  // First: its onRequest hooks decide whether the request is traced and open its SERVER span, which every
  // later hook runs inside.
  if (options.tracing) await options.tracing(app)
  registerJsonBodyParser(app)
  registerErrorHandler(app)
  registerCommonHeaders(app)
  registerAccessLog(app, deps)
  refuseDuplicateHosts(app)
  refuseMalformedTargets(app)
  // Before the scopes: the document is generated from the routes registered after it.
  await registerOpenApi(app)
  await registerApiScope(app, deps, (api) => {
    registerPetRoutes(api, deps)
    registerPetLifecycleRoutes(api, deps)
    registerOrderRoutes(api, deps)
    registerWebhookRoutes(api, deps)
    registerEventRoutes(api, deps)
    registerStandingRoute(api, deps.apiKeys)
    registerUsageRoute(api, deps)
  })
  await registerPublicScope(app, deps, (scope) => registerDashboardRoutes(scope, readBuiltDashboard()))
  registerHealthRoutes(app, deps)
  // With METRICS_PORT set, server.ts serves /metrics on that port instead.
  if (config.metricsPort === undefined) registerMetricsRoute(app, deps.metrics)
  return app
}
