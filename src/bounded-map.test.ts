import { expect, test } from 'vitest'
import { createBoundedMap } from './bounded-map.js'

test('holds at most its bound, dropping the oldest entry first', () => {
  const map = createBoundedMap<string, number>(2)
  map.set('a', 1)
  map.set('b', 2)
  map.set('a', 3)
  expect(map.size).toBe(2)
  map.set('c', 4)
  expect([map.get('a'), map.get('b'), map.get('c')]).toEqual([undefined, 2, 4])
  expect(map.size).toBe(2)
})
