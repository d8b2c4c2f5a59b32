import { expect, it } from 'vitest'
import { toAppError } from './error-handler.js'

it('a body its client cut short is a 400, not a database that is unavailable (both are ECONNRESET)', () => {
  // What Fastify's body reader passes on when the client hangs up mid-body or Node's request timeout fires.
  const aborted = Object.assign(new Error('aborted'), { code: 'ECONNRESET', statusCode: 400 })
  expect(toAppError(aborted)).toMatchObject({ status: 400, code: 'invalid_request' })
  // A connection to PostgreSQL reset under a query is still the database's.
  const lost = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })
  expect(toAppError(lost)).toMatchObject({ status: 503, code: 'unavailable' })
})
