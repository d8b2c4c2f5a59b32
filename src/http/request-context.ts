import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { isApiPath, pathOf } from './api-paths.js'

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** The client's X-Request-Id when it is short and plain, else a fresh UUID. */
export function requestIdOf(request: IncomingMessage): string {
  const sent = request.headers['x-request-id']
  return typeof sent === 'string' && SANE_REQUEST_ID.test(sent) ? sent : randomUUID()
}

/** Headers every response carries; set in onSend so error and 404 responses get them too. */
export function registerResponseHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id)
    reply.header('x-content-type-options', 'nosniff')
    if (isApiPath(pathOf(request.url))) reply.header('cache-control', 'no-store')
  })
}
