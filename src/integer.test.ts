import { expect, test } from 'vitest'
import { parseInteger } from './integer.js'

test('plain decimal digits parse, up to 2^53 - 1 and its 16 digits', () => {
  expect(parseInteger('0')).toBe(0)
  expect(parseInteger('20')).toBe(20)
  expect(parseInteger('007')).toBe(7)
  expect(parseInteger('9007199254740991')).toBe(Number.MAX_SAFE_INTEGER)
})

test.each(['', ' 5', '5 ', '5abc', '2.5', '-1', '+1', '0x10', '1e3', '٣', '12345678901234567'])(
  '%j is not an integer',
  (text) => {
    expect(parseInteger(text)).toBeNaN()
  },
)
