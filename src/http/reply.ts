import type { FastifyInstance } from 'fastify'
import type { Clock } from '../clock.js'
import type { Decision, WindowState } from '../rate-limit/rate-limit.port.js'
import { bindingWindow, windowsAsSeen } from '../rate-limit/windows.js'

/**
 * What every response gets when it is sent (errors and 404s too): its request id and nosniff. Once the
 * app is closing, responses say `Connection: close`, so a kept-alive client cannot hold the drain open.
 */
export function registerCommonHeaders(app: FastifyInstance): void {
  let closing = false
  app.addHook('preClose', (done) => {
    closing = true
    done()
  })
  app.addHook('onSend', (request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close')
    reply.header('x-request-id', request.id)
    reply.header('x-content-type-options', 'nosniff')
    done(null, payload)
  })
}

/**
 * What every response of the API scope adds: `Cache-Control: no-store` (even when the request failed
 * before the guard decided, the database down say) and the rate-limit headers of the guard's decision.
 */
export function registerApiHeaders(scope: FastifyInstance, clock: Clock): void {
  scope.addHook('onSend', (request, reply, payload, done) => {
    reply.header('cache-control', 'no-store')
    const caller = request.caller
    if (caller) reply.headers(rateLimitHeaders(caller.rateLimit, clock.now()))
    done(null, payload)
  })
}

const seconds = (ms: number) => Math.ceil(ms / 1000)

/**
 * X-RateLimit-* for the binding window as the client may use it (during a ban nothing remains until the
 * ban ends: `windowsAsSeen`), plus the IETF draft's RateLimit-Policy (both windows) and RateLimit (the
 * binding one).
 */
export function rateLimitHeaders(decision: Decision, now: number): Record<string, string> {
  const window = bindingWindow(windowsAsSeen(decision))
  return {
    'x-ratelimit-limit': String(window.limit),
    'x-ratelimit-remaining': String(window.remaining),
    'x-ratelimit-reset': String(seconds(window.resetAt)),
    'ratelimit-policy': decision.windows.map(policyItem).join(', '),
    ratelimit: `"${window.name}";r=${window.remaining};t=${seconds(window.resetAt - now)}`,
  }
}

function policyItem(window: WindowState): string {
  return `"${window.name}";q=${window.limit};w=${window.lengthMs / 1000}`
}
