import { expect, test } from 'vitest'
import { ErrorBody } from './error.schemas.js'
import { sharedSerializers } from './serializers.js'

const compile = sharedSerializers()({ Error: ErrorBody }, {})
const route = (schema: object, httpStatus = '404') => ({
  method: 'GET',
  url: '/v1/pets/:petId',
  httpStatus,
  schema,
})

test('responses that differ only in their document keywords share one compiled serializer', () => {
  const notFound = compile(route({ $ref: 'Error', description: 'Error: `not_found`.', headers: { A: {} } }))
  const limited = compile(
    route({ $ref: 'Error', description: 'Error: `rate_limited`.', examples: {} }, '429'),
  )
  expect(limited).toBe(notFound)
  const body = { code: 'not_found', message: 'No such pet.', status: 404, stack: 'never written' }
  expect(JSON.parse(notFound(body))).toEqual({ code: 'not_found', message: 'No such pet.', status: 404 })
})

test('a schema that writes other fields gets its own serializer', () => {
  const error = compile(route({ $ref: 'Error', description: 'one' }))
  const other = { type: 'object', properties: { id: { type: 'integer' } }, description: 'one' }
  const pet = compile(route(other, '200'))
  expect(pet).not.toBe(error)
  expect(pet({ id: 7, name: 'never written' })).toBe('{"id":7}')
})
