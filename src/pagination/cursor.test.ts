import { expect, test } from 'vitest'
import { AppError } from '../errors.js'
import { decodeCursor, encodeCursor } from './cursor.js'

test('a cursor decodes to the id it was made from', () => {
  for (const id of [1, 42, 9007199254740991]) expect(decodeCursor(encodeCursor(id))).toBe(id)
})

test('a cursor is opaque URL-safe text', () => {
  expect(encodeCursor(42)).toMatch(/^[A-Za-z0-9_-]+$/)
})

test.each([
  ['garbage', 'abc'],
  ['empty', ''],
  [
    'another id with the old check',
    Buffer.from(`v1:43:${Buffer.from(encodeCursor(42), 'base64url').toString().split(':')[2]}`).toString(
      'base64url',
    ),
  ],
  ['id 0', Buffer.from('v1:0:AAAAAAAA').toString('base64url')],
  ['very long', 'A'.repeat(10_000)],
  ['padded', `${encodeCursor(42)}=`],
])('a %s cursor is an invalid_request AppError', (_label, cursor) => {
  expect(() => decodeCursor(cursor)).toThrow(AppError)
})
