import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify'
import { answeredOnSocket } from '../answered-socket.js'
import { isDatabaseUnavailable } from '../db/connect.js'
import { AppError, UNAVAILABLE_RETRY_AFTER_S } from '../errors.js'
import { redactSecrets } from '../redact-secrets.js'
import { BODY_TOO_LARGE, NOT_JSON } from './error.schemas.js'

/** Fastify's own errors, as the one sentence a client can act on. */
const FRAMEWORK_ERRORS: Readonly<Record<string, () => AppError>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new AppError('payload_too_large', BODY_TOO_LARGE),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new AppError('unsupported_media_type', NOT_JSON),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () =>
    new AppError('invalid_request', 'Content-Length does not match the body sent'),
}

/** What the docs page's file server (@fastify/static) refuses, answered as such: never a 500. */
const STATIC_FILE_ERRORS: Readonly<
  Record<number, (error: { headers?: Record<string, string> }) => AppError>
> = {
  403: () => new AppError('forbidden', 'this file may not be read'),
  412: () => new AppError('precondition_failed', 'the file does not match If-Match or If-Unmodified-Since'),
  416: (error) => {
    const range = error.headers?.['Content-Range']
    return new AppError('range_not_satisfiable', 'the requested range is outside the file', {
      ...(range && { 'content-range': range }),
    })
  },
}

/** Maps anything thrown while handling a request to the AppError whose body the client gets. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error
  const fastifyError = error as FastifyError
  const known = fastifyError.code === undefined ? undefined : FRAMEWORK_ERRORS[fastifyError.code]
  if (known) return known()
  // Asked before the database's codes: a body its client cut short (a hang-up, Node's request timeout) is
  // `aborted` with code ECONNRESET, as a lost database connection is, and Fastify's 400.
  if (fastifyError.statusCode === 400) return new AppError('invalid_request', 'the request is malformed')
  const fromFiles = STATIC_FILE_ERRORS[fastifyError.statusCode ?? 0]
  if (fromFiles) return fromFiles(error as { headers?: Record<string, string> })
  if (isDatabaseUnavailable(error)) {
    return new AppError('unavailable', 'the database is unavailable: retry in a moment', {
      'retry-after': String(UNAVAILABLE_RETRY_AFTER_S),
    })
  }
  return new AppError(
    'internal_error',
    'something went wrong on our side; the request id identifies it for support',
  )
}

/**
 * The spec's Error body (CONTRACT §4) with the response's request id. The only place it is written: the
 * error handler sends it, and a request Node refused before it became one (clientError) writes it to the
 * socket. Nothing shaped like a key or a webhook secret survives in the message.
 */
export function errorBodyOf(appError: AppError, requestId: string) {
  return {
    code: appError.code,
    message: redactSecrets(appError.message),
    status: appError.status,
    requestId,
  }
}

/** Every error of every scope leaves here: the status, the error's own headers, the Error body. */
export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    // A body cut short because Node answered on the socket (408: it did not arrive in time): that answer.
    const cutShort = (error as { code?: string }).code === 'ECONNRESET'
    const appError = (cutShort && answeredOnSocket(request.raw.socket)) || toAppError(error)
    if (appError.status >= 500) request.log.error({ reqId: request.id, err: error }, 'request failed')
    return reply.code(appError.status).headers(appError.headers).send(errorBodyOf(appError, request.id))
  })
}

/**
 * A scope's not-found handler: 405 with `Allow` when the router answers the path with other methods
 * (`allowedMethods`, read from the routes), else 404. The handler runs after the scope's hooks, so an
 * unknown path under /v1 is authenticated and counted like any API request.
 */
export function notFoundHandler(allowedMethods: (target: string) => string[] = () => []) {
  return async (request: FastifyRequest): Promise<never> => {
    const allow = allowedMethods(request.url)
    const path = shownPath(request.url)
    // A method the path does answer, yet no route matched (an encoded slash, say): not found.
    if (allow.length > 0 && !allow.includes(request.method)) {
      const methods = allow.join(', ')
      throw new AppError(
        'method_not_allowed',
        `${request.method} is not allowed on ${path}; use ${methods}`,
        {
          allow: methods,
        },
      )
    }
    throw new AppError('not_found', `there is no route ${request.method} ${path}`)
  }
}

/** The path of a target as a message may show it: without query, decoded where it decodes, at most 100 characters. */
function shownPath(target: string): string {
  let path = target.split(/[?#]/, 1)[0] ?? ''
  try {
    path = decodeURIComponent(path)
  } catch {
    // Shown as sent.
  }
  return path.length > 100 ? `${path.slice(0, 100)}...` : path
}
