import type { FastifyInstance } from 'fastify'

/**
 * One info line per request, when it completes (Fastify's default writes two), and a debug line on
 * arrival for tracing. Headers are never logged, so no API key can reach the logs this way.
 */
export function registerRequestLog(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    request.log.debug({ req: { method: request.method, url: request.url } }, 'request received')
  })
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        req: { method: request.method, url: request.url, remoteAddress: request.ip },
        res: { statusCode: reply.statusCode },
        responseTime: reply.elapsedTime,
      },
      'request completed',
    )
  })
}
