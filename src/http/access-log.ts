import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { Metrics } from './metrics.js'

/**
 * One line and one metrics observation per request, when it completes. The line names the account (the
 * key's id, never the key), the client IP and the User-Agent; headers are never logged, so no API key
 * reaches the logs this way. It goes through the root logger: no child logger per request. At debug,
 * a line on arrival too.
 */
export function registerAccessLog(app: FastifyInstance, logger: Logger, metrics: Metrics): void {
  // A line on arrival too, for tracing a request that never completes; no hook at all at info.
  if (logger.isLevelEnabled('debug')) {
    app.addHook('onRequest', (request, _reply, done) => {
      logger.debug(
        { reqId: request.id, req: { method: request.method, url: request.url } },
        'request received',
      )
      done()
    })
  }
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched'
    metrics.observeRequest(route, request.method, reply.statusCode, reply.elapsedTime / 1000)
    if (logger.isLevelEnabled('info')) {
      logger.info(
        // Flat fields: pino writes strings and numbers directly, nested objects through JSON.stringify.
        {
          reqId: request.id,
          method: request.method,
          url: request.url,
          route,
          statusCode: reply.statusCode,
          responseTime: reply.elapsedTime,
          account: request.caller?.apiKey?.id,
          ip: request.ip,
          userAgent: request.headers['user-agent'],
        },
        'request completed',
      )
    }
    done()
  })
}
