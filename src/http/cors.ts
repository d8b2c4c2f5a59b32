import cors from '@fastify/cors'
import type { FastifyInstance } from 'fastify'

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
  'Location',
]

/**
 * CORS for the configured origins, in one scope: its hook comes before the scope's own (a preflight is
 * answered before the guard or the limit), so register it first. Only a real preflight (OPTIONS with
 * Access-Control-Request-Method) is answered by the plugin; any other OPTIONS reaches the scope's
 * not-found handler (the API's 405 with Allow).
 */
export async function registerCors(scope: FastifyInstance, origins: readonly string[]): Promise<void> {
  const options = {
    origin: [...origins],
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-Match', 'X-Request-Id'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  }
  await scope.register(cors, {
    delegator: (request, callback) => {
      const preflight =
        request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined
      callback(null, { ...options, preflight })
    },
  })
}
