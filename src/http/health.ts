import type { FastifyInstance } from 'fastify'
import { AppError } from '../errors.js'

/**
 * Liveness answers while the process runs; readiness only while the stores answer and the process is
 * not shutting down (from the first moment of the drain, so a load balancer stops sending at once).
 */
export function registerHealthRoutes(app: FastifyInstance, checkReady: () => Promise<void>): void {
  let draining = false
  app.addHook('preClose', (done) => {
    draining = true
    done()
  })
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }))
  app.get('/readyz', { schema: { hide: true } }, async (request) => {
    if (draining) throw new AppError('unavailable', 'the service is shutting down')
    try {
      await checkReady()
    } catch (error) {
      request.log.warn({ reqId: request.id, err: error }, 'readiness check failed')
      throw new AppError('unavailable', 'the database does not answer', { 'retry-after': '1' })
    }
    return { status: 'ready' }
  })
}
