import type { FastifyInstance } from 'fastify'
import type { Clock } from '../clock.js'
import { rateLimitHeaders } from '../rate-limit/rate-limit.headers.js'
import { isApiRequest } from './api-paths.js'

/**
 * The headers every response carries, written in one place (onSend, so errors and 404s get them too):
 * the request id, nosniff, and on API responses `Cache-Control: no-store` and the rate-limit headers of
 * the guard's decision. Once the app is closing, responses say `Connection: close`, so a kept-alive
 * client cannot hold the drain open.
 */
export function registerResponseHeaders(app: FastifyInstance, clock: Clock): void {
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
