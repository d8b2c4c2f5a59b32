import { describe, expect, it } from 'vitest'
import { createValidatorCompiler } from './validation.js'

const compile = createValidatorCompiler([])

/** The message a body breaking `field`'s schema gets. */
function messageOf(field: object, value: unknown, httpPart = 'body'): string | undefined {
  const schema = { type: 'object', properties: { field }, additionalProperties: false }
  const validate = compile({ schema, httpPart, method: 'POST', url: '/' }) as (data: unknown) => {
    error?: Error
  }
  return validate({ field: value }).error?.message
}

describe('every refusal names the field and the rule it broke, with its limit', () => {
  it.each([
    ['minItems', { type: 'array', minItems: 1 }, [], 'field must have at least 1 item'],
    ['minItems (plural)', { type: 'array', minItems: 2 }, ['a'], 'field must have at least 2 items'],
    ['maxItems', { type: 'array', maxItems: 2 }, [1, 2, 3], 'field must have at most 2 items'],
    ['uniqueItems', { type: 'array', uniqueItems: true }, ['*', '*'], 'field must not repeat an item'],
    ['minLength 1', { type: 'string', minLength: 1 }, '', 'field must not be empty'],
    ['minLength', { type: 'string', minLength: 3 }, 'ab', 'field must be at least 3 characters long'],
    ['maxLength', { type: 'string', maxLength: 5 }, 'abcdef', 'field must be at most 5 characters long'],
    [
      'minimum and maximum',
      { type: 'integer', minimum: 1, maximum: 9 },
      0,
      'field must be an integer from 1 to 9',
    ],
    ['minimum', { type: 'integer', minimum: 1 }, 0, 'field must be an integer of at least 1'],
    ['maximum', { type: 'integer', maximum: 9 }, 10, 'field must be an integer of at most 9'],
    ['an integer', { type: 'integer' }, 1.5, 'field must be an integer'],
    ['enum', { type: 'string', enum: ['a', 'b'] }, 'c', 'field must be one of a, b'],
    ['pattern', { type: 'string', pattern: '^x$', 'x-expected': 'an x' }, 'y', 'field must be an x'],
    ['pattern without words', { type: 'string', pattern: '^x$' }, 'y', 'field must be well-formed'],
    ['type string', { type: 'string' }, 5, 'field must be a string'],
    ['type array', { type: 'array' }, 'a', 'field must be an array'],
    ['type object', { type: 'object' }, [], 'field must be a JSON object'],
  ])('%s', (_keyword, field, value, message) => {
    expect(messageOf(field, value)).toBe(message)
  })
})
