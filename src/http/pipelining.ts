import type { FastifyReply } from 'fastify'

/**
 * Calls `next` once this response may be written: at once, or when every response pipelined before it on
 * the same connection is done. Node queues pipelined responses until then, and on Node 20 a queued
 * response never learns that its connection closed: a file stream opened for it (the docs page's assets)
 * kept its file descriptor for ever, and a rendered body stayed in memory. Waiting opens nothing until the
 * response owns the socket; if the connection closes first, nothing was opened and nothing is left.
 */
export function whenWritable(reply: FastifyReply, next: () => void): void {
  if (reply.raw.socket) next()
  else reply.raw.once('socket', () => next())
}
