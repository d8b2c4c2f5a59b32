import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** The client's X-Request-Id when it is short and plain, else a fresh UUID. */
export function requestIdOf(request: IncomingMessage): string {
  const sent = request.headers['x-request-id']
  return typeof sent === 'string' && SANE_REQUEST_ID.test(sent) ? sent : randomUUID()
}

/**
 * Headers every response carries; set in onSend so error and 404 responses get them too. Once the app
 * is closing, responses say `Connection: close`, so a kept-alive client cannot hold the drain open.
 */
export function registerResponseHeaders(app: FastifyInstance): void {
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })
  app.addHook('onSend', async (request, reply) => {
    if (closing) reply.header('connection', 'close')
    reply.header('x-request-id', request.id)
    reply.header('x-content-type-options', 'nosniff')
    if (request.apiRequest) reply.header('cache-control', 'no-store')
  })
}
