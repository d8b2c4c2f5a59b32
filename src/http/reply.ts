import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { UsageRecorder } from '../api-keys/usage.js'
import type { Clock } from '../clock.js'
import type { Decision, WindowState } from '../rate-limit/rate-limit.port.js'
import { bindingWindow } from '../rate-limit/windows.js'
import { isApiRequest } from './api-paths.js'
import type { Metrics } from './metrics.js'

/**
 * What every response gets, in one hook per stage: its common headers when it is sent (so errors and
 * 404s get them too), then one log line and one metrics observation when it is done.
 */
export function registerReplyHooks(
  app: FastifyInstance,
  deps: { clock: Clock; logger: Logger; metrics: Metrics; usage: Pick<UsageRecorder, 'record'> },
) {
  registerCommonHeaders(app, deps.clock)
  registerAccessLog(app, deps)
}

/**
 * The request id, nosniff, and on API responses `Cache-Control: no-store` and the rate-limit headers of
 * the guard's decision. Once the app is closing, responses say `Connection: close`, so a kept-alive
 * client cannot hold the drain open.
 */
function registerCommonHeaders(app: FastifyInstance, clock: Clock): void {
  let closing = false
  app.addHook('preClose', (done) => {
    closing = true
    done()
  })
  app.addHook('onSend', (request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close')
    reply.header('x-request-id', request.id)
    reply.header('x-content-type-options', 'nosniff')
    const caller = request.caller
    if (caller) reply.headers(rateLimitHeaders(caller.rateLimit, clock.now()))
    // A request that failed before the guard decided (the database down) is still an API response.
    if (caller || isApiRequest(request)) reply.header('cache-control', 'no-store')
    done(null, payload)
  })
}

const seconds = (ms: number) => Math.ceil(ms / 1000)

/** `Retry-After` of a refusal: whole seconds (RFC 9110 delta-seconds), at least 1. */
export function retryAfterOf(decision: { retryAfterMs: number }): string {
  return String(Math.max(1, seconds(decision.retryAfterMs)))
}

/**
 * X-RateLimit-* for the binding window (during a ban: nothing remains until the ban ends), plus the IETF
 * draft's RateLimit-Policy (both windows) and RateLimit (the binding one).
 */
export function rateLimitHeaders(decision: Decision, now: number): Record<string, string> {
  const window = bindingWindow(decision.windows)
  const banned = decision.outcome === 'banned'
  const remaining = banned ? 0 : window.remaining
  const resetAt = banned ? Math.max(decision.bannedUntil, window.resetAt) : window.resetAt
  return {
    'x-ratelimit-limit': String(window.limit),
    'x-ratelimit-remaining': String(remaining),
    'x-ratelimit-reset': String(seconds(resetAt)),
    'ratelimit-policy': decision.windows.map(policyItem).join(', '),
    ratelimit: `"${window.name}";r=${remaining};t=${seconds(resetAt - now)}`,
  }
}

function policyItem(window: WindowState): string {
  return `"${window.name}";q=${window.limit};w=${window.lengthMs / 1000}`
}

/**
 * One line per request, when it completes, naming the account (the key's id, never the key), the
 * client IP and the User-Agent; headers are never logged, so no API key reaches the logs this way.
 * It goes through the root logger (no child logger per request). At debug, a line on arrival too.
 */
function registerAccessLog(
  app: FastifyInstance,
  deps: { logger: Logger; metrics: Metrics; usage: Pick<UsageRecorder, 'record'> },
): void {
  const { logger, metrics, usage } = deps
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
    const account = request.caller?.apiKey?.id
    if (account !== undefined) usage.record(account, reply.statusCode)
    if (logger.isLevelEnabled('info')) {
      // Flat fields: pino writes strings and numbers directly, nested objects through JSON.stringify.
      logger.info(
        {
          reqId: request.id,
          method: request.method,
          url: loggableUrl(request.url),
          route,
          statusCode: reply.statusCode,
          responseTime: reply.elapsedTime,
          account,
          ip: request.ip,
          userAgent: request.headers['user-agent'],
        },
        'request completed',
      )
    }
    done()
  })
}

/** Query parameters where clients put credentials by mistake; they never authenticate (only the header does). */
const SUSPECT = /(key|token)=/i
const CREDENTIAL_PARAMETER = /([?&](?:api[_-]?key|access[_-]?token|token|key)=)[^&#]*/gi

/** The URL as logged: the value of any credential-like query parameter replaced. */
export function loggableUrl(url: string): string {
  // Every such parameter name ends in `key` or `token`: most URLs are returned as they are.
  return SUSPECT.test(url) ? url.replace(CREDENTIAL_PARAMETER, '$1[redacted]') : url
}
