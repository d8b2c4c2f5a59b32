import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'

/** How long a kept-alive connection that is idle when the drain begins may still bring one request. */
export const IDLE_GRACE_MS = 1000

/**
 * Stops the app the way CONTRACT §12 says: no new connections; requests in flight, and any request that
 * arrives on a connection already open, are served with `Connection: close` (reply.ts), so each
 * connection ends after its next response; connections still idle after a short grace are closed; at
 * `deadlineMs` whatever is left is cut, so the process always exits in time.
 *
 * Node's `server.close()` drops idle kept-alive connections at once, and a request a client wrote on
 * one in that instant was reset (the socket is destroyed with the request unread). During the grace such
 * a request is answered instead.
 */
export async function drain(app: FastifyInstance, deadlineMs: number, logger: Logger): Promise<void> {
  const server = app.server
  const closeIdleConnections = server.closeIdleConnections.bind(server)
  server.closeIdleConnections = () => {}
  const grace = setTimeout(closeIdleConnections, Math.min(IDLE_GRACE_MS, deadlineMs / 2))
  const deadline = setTimeout(() => {
    logger.warn({ deadlineMs }, 'drain deadline reached: closing the connections still open')
    server.closeAllConnections()
  }, deadlineMs)
  try {
    await app.close()
  } finally {
    clearTimeout(grace)
    clearTimeout(deadline)
  }
}
