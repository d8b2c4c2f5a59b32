import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../errors.js'

/**
 * Errors Fastify and Node answer before any route or hook runs (a URL that does not decode, an
 * unparseable request, headers over Node's limit, a request that arrives too slowly). They get the
 * same Error body as every other error.
 */
export function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const appError =
    error.code === 'FST_ERR_BAD_URL'
      ? new AppError('invalid_request', 'the URL is malformed: check its percent-encoding')
      : new AppError('invalid_request', 'the request could not be routed')
  reply
    .code(appError.status)
    .header('x-request-id', request.id)
    .send({ code: appError.code, message: appError.message, status: appError.status, requestId: request.id })
}

/** Node's `clientError`: the request never became a request, so the reply is written to the socket. */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const appError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError('header_too_large', 'the request line and headers must be at most 16 KiB together')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new AppError('request_timeout', 'the request did not arrive in time')
        : new AppError('invalid_request', 'the request is not valid HTTP/1.1')
  if (socket.writable) {
    const requestId = randomUUID()
    const body = JSON.stringify({
      code: appError.code,
      message: appError.message,
      status: appError.status,
      requestId,
    })
    socket.write(
      `HTTP/1.1 ${appError.status} ${STATUS_CODES[appError.status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\n` +
        `X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy()
}
