import { expect, test } from 'vitest'
import { causeInWords } from './startup-errors.js'

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code })

test('a known code anywhere along the chain of causes is said in words, else the message stands', () => {
  expect(causeInWords(withCode('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED'))).toBe(
    'connection refused',
  )
  const everyAddress = new AggregateError([withCode('connect ECONNREFUSED ::1:1', 'ECONNREFUSED')], '')
  expect(causeInWords(everyAddress)).toBe('connection refused')
  const wrapped = new Error('migration failed', {
    cause: withCode('password authentication failed', '28P01'),
  })
  expect(causeInWords(wrapped)).toBe('password authentication failed')
  expect(causeInWords(new Error('something else'))).toBe('something else')
})
