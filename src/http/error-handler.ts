import type { FastifyError, FastifyInstance } from 'fastify'
import { isDatabaseUnavailable } from '../db/connect.js'
import { AppError } from '../errors.js'
import { allowedMethods, decodedPathOf } from './api-paths.js'
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
  if (isDatabaseUnavailable(error)) {
    return new AppError('unavailable', 'the database is unavailable: retry in a moment', {
      'retry-after': '1',
    })
  }
  const fastifyError = error as FastifyError
  const known = fastifyError.code === undefined ? undefined : FRAMEWORK_ERRORS[fastifyError.code]
  if (known) return known()
  if (fastifyError.statusCode === 400) return new AppError('invalid_request', 'the request is malformed')
  const fromFiles = STATIC_FILE_ERRORS[fastifyError.statusCode ?? 0]
  if (fromFiles) return fromFiles(error as { headers?: Record<string, string> })
  return new AppError(
    'internal_error',
    'something went wrong on our side; the request id identifies it for support',
  )
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error)
    if (appError.status >= 500) request.log.error({ reqId: request.id, err: error }, 'request failed')
    return reply.code(appError.status).headers(appError.headers).send({
      code: appError.code,
      message: appError.message,
      status: appError.status,
      requestId: request.id,
    })
  })

  // Unknown routes: a 405 with Allow when the path is known but the method is not, else 404.
  app.setNotFoundHandler(async (request) => {
    const path = decodedPathOf(request.url)
    const shown = path.length > 100 ? `${path.slice(0, 100)}...` : path
    const allow = allowedMethods(path)
    // A method the path does answer, yet no route matched (an encoded slash, say): not found.
    if (allow && !allow.split(', ').includes(request.method)) {
      throw new AppError('method_not_allowed', `${request.method} is not allowed on ${shown}; use ${allow}`, {
        allow,
      })
    }
    throw new AppError('not_found', `there is no route ${request.method} ${shown}`)
  })
}
