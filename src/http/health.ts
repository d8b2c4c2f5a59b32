import type { FastifyInstance } from 'fastify'
import { AppError, UNAVAILABLE_RETRY_AFTER_S } from '../errors.js'
import type { RateLimitStore } from '../rate-limit/rate-limit.port.js'

/**
 * Liveness answers while the process runs; readiness only while the stores answer and the process is
 * not shutting down (from the first moment of the drain, so a load balancer stops sending at once).
 * The checks have their own deadline (deps.ts): /readyz answers within 1 s whatever the database does.
 */
export function registerHealthRoutes(
  app: FastifyInstance,
  deps: { checkReady(): Promise<void>; rateLimitStore: Pick<RateLimitStore, 'shared'> },
): void {
  let draining = false
  app.addHook('preClose', (done) => {
    draining = true
    done()
  })
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }))
  app.get('/readyz', { schema: { hide: true } }, async (request) => {
    if (draining) throw new AppError('unavailable', 'the service is shutting down')
    try {
      await deps.checkReady()
    } catch (error) {
      request.log.warn({ reqId: request.id, err: error }, 'readiness check failed')
      throw new AppError('unavailable', 'the database does not answer', {
        'retry-after': String(UNAVAILABLE_RETRY_AFTER_S),
      })
    }
    // Redis is not required: without it limits hold per instance (CONTRACT §13), and the body says so.
    return { status: 'ready', rateLimits: deps.rateLimitStore.shared ? 'shared' : 'per-instance' }
  })
}
