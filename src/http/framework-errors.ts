import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { AppError } from '../errors.js'
import { clientIpOf, trustFunctionOf } from './client-ip.js'
import { toAppError } from './error-handler.js'
import { type GuardDeps, guard } from './guard.js'
import { rateLimitHeaders } from './reply.js'

/**
 * Errors Fastify answers before any route or hook runs (a URL that does not decode, a path parameter
 * over the router's limit). They get the same Error body as every other error. Under /v1 such a request
 * passes the guard like any other API request: it is counted (per key, else per client IP), can be
 * refused with 429, and carries the rate-limit headers; no hook runs here, so its headers are written here.
 */
export function createFrameworkErrorHandler(deps: GuardDeps & { config: Config }) {
  const trust = trustFunctionOf(deps.config.trustProxy)
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const refused =
      error.code === 'FST_ERR_BAD_URL'
        ? new AppError('invalid_request', 'the URL is malformed: check its percent-encoding')
        : new AppError('invalid_request', 'the request could not be routed')
    const path = request.raw.url ?? ''
    if (!(path === '/v1' || path.startsWith('/v1/'))) {
      answer(request, reply, refused)
      return
    }
    reply.header('cache-control', 'no-store')
    Promise.resolve()
      .then(() => guard(request, deps, clientIpOf(request.raw, trust)))
      .then(
        () => refused,
        (failure) =>
          failure instanceof AppError && failure.code === 'unauthorized' ? refused : toAppError(failure),
      )
      .then((appError) => {
        if (request.caller) reply.headers(rateLimitHeaders(request.caller.rateLimit, deps.clock.now()))
        answer(request, reply, appError)
      })
  }
}

function answer(request: FastifyRequest, reply: FastifyReply, appError: AppError): void {
  reply
    .code(appError.status)
    .headers(appError.headers)
    .header('x-request-id', request.id)
    .header('x-content-type-options', 'nosniff')
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
