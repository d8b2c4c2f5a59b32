import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { redactSecrets, redactSecretsInTarget } from '../redact-secrets.js'
import { traceIdsOf, tracingEnabled } from '../tracing/tracing.js'
import type { Metrics } from './metrics.js'

/**
 * One line per request, when it completes, naming the account (the key's id, never the key), the
 * client IP and the User-Agent, plus one metrics observation. Headers are never logged, and whatever is
 * shaped like a key or a webhook secret is redacted from the target and the User-Agent (the request id
 * never has that shape: request-context.ts). It goes through the root logger (no child logger per
 * request). At debug, a line on arrival too. With tracing on, the line carries its request span's `trace_id` and `span_id`.
 */
export function registerAccessLog(
  app: FastifyInstance,
  deps: { logger: Logger; metrics: Metrics; usage: { record(account: number, status: number): void } },
): void {
  const { logger, metrics, usage } = deps
  if (logger.isLevelEnabled('debug')) {
    app.addHook('onRequest', (request, _reply, done) => {
      logger.debug(
        { reqId: request.id, req: { method: request.method, url: loggableUrl(request.originalUrl) } },
        'request received',
      )
      done()
    })
  }
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched'
    metrics.observeRequest(route, request.method, reply.statusCode, reply.elapsedTime / 1000)
    const account = request.caller?.apiKey?.id
    if (account !== undefined) usage.record(account, reply.statusCode)
    if (logger.isLevelEnabled('info')) {
      const userAgent = request.headers['user-agent']
      const ids = tracingEnabled()
        ? traceIdsOf(request.opentelemetry().context, request.untracedTraceId)
        : undefined
      // Flat fields: pino writes strings and numbers directly, nested objects through JSON.stringify.
      logger.info(
        {
          reqId: request.id,
          method: request.method,
          url: loggableUrl(request.originalUrl),
          route,
          statusCode: reply.statusCode,
          responseTime: reply.elapsedTime,
          account,
          ip: request.ip,
          userAgent: userAgent === undefined ? undefined : redactSecrets(userAgent),
          trace_id: ids?.traceId,
          span_id: ids?.spanId,
        },
        'request completed',
      )
    }
    done()
  })
}

/** Query parameters where clients put credentials by mistake; they never authenticate (only the header does). */
const SUSPECT = /(key|token)=/i
const CREDENTIAL_PARAMETER = /([?&;](?:api[_-]?key|access[_-]?token|token|key)=)[^&;#]*/gi

/**
 * The target as logged: anything shaped like a secret redacted, however it is encoded, and the value of any
 * credential-like query parameter replaced whatever its shape.
 */
export function loggableUrl(url: string): string {
  const redacted = redactSecretsInTarget(url)
  // Every such parameter name ends in `key` or `token`: most targets are returned as they are.
  return SUSPECT.test(redacted) ? redacted.replace(CREDENTIAL_PARAMETER, '$1[redacted]') : redacted
}
