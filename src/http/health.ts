import type { FastifyInstance } from 'fastify'
import { AppError } from '../errors.js'

/** Liveness answers while the process runs; readiness only while the stores answer. */
export function registerHealthRoutes(app: FastifyInstance, checkReady: () => Promise<void>): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }))
  app.get('/readyz', { schema: { hide: true } }, async (request) => {
    try {
      await checkReady()
    } catch (error) {
      request.log.warn({ reqId: request.id, err: error }, 'readiness check failed')
      throw new AppError('unavailable', 'the database does not answer', { 'retry-after': '1' })
    }
    return { status: 'ready' }
  })
}
