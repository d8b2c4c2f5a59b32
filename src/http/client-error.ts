import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import { markAnswered } from '../answered-socket.js'
import { AppError } from '../errors.js'
import { errorBodyOf } from './error-handler.js'

/**
 * Node's `clientError`: bytes that never became a request (not HTTP, headers over the limit, too slow),
 * so no hook can run. The Error body goes straight to the socket, with the headers every response carries.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const appError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError('header_too_large', 'the request line and headers must be at most 16 KiB together')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new AppError('request_timeout', 'the request did not arrive in time')
        : new AppError('invalid_request', 'the request is not valid HTTP/1.1')
  if (socket.writable) {
    markAnswered(socket, appError)
    const requestId = randomUUID()
    const body = JSON.stringify(errorBodyOf(appError, requestId))
    socket.write(
      `HTTP/1.1 ${appError.status} ${STATUS_CODES[appError.status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\n` +
        `X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy()
}
