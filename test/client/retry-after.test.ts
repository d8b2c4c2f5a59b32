import { expect, it } from 'vitest'
import { parseRetryAfter, readRetryAfterMs } from '../../client/src/rate-limit-state.js'

const now = Date.parse('2026-11-26T12:00:00Z')

it.each([
  ['7', 7_000],
  [' 120 ', 120_000],
  ['0', 0],
  ['Thu, 26 Nov 2026 12:00:30 GMT', 30_000],
  ['Thu, 26 Nov 2026 11:00:00 GMT', 0],
  ['-5', undefined],
  ['1.5', undefined],
  ['soon', undefined],
  ['', undefined],
])(
  'Retry-After %j is %j ms, from a header and as a value (as the webhook sender reads it)',
  (value, expected) => {
    expect(readRetryAfterMs(new Headers({ 'retry-after': value }), now)).toBe(expected)
    expect(parseRetryAfter(value, now)).toBe(expected)
  },
)
