import type { FastifyInstance } from 'fastify'
import { AppError } from '../errors.js'

/**
 * JSON is the only body the API takes: every other Content-Type is a 415. A `__proto__` or
 * `constructor` key parses as a plain own property (JSON.parse never touches prototypes) and the
 * schemas then refuse it as an unknown field, so it never reaches the services.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    if (body === '') {
      done(new AppError('invalid_request', 'the body is empty: send a JSON object'), undefined)
      return
    }
    try {
      done(null, JSON.parse(body as string))
    } catch {
      done(new AppError('invalid_request', 'the body is not valid JSON'), undefined)
    }
  })
}
