import { setImmediate as nextTurn } from 'node:timers/promises'
import { expect, test } from 'vitest'
import { batchByTurn } from './turn-batch.js'

test('the keys asked in one turn are loaded in one call, and each caller gets its own value', async () => {
  const loads: number[][] = []
  const double = batchByTurn(async (keys: number[]) => {
    loads.push(keys)
    return new Map(keys.filter((key) => key !== 404).map((key) => [key, key * 2]))
  })
  const answers = Promise.all([double(1), double(2), double(1), double(404)])
  expect(loads).toEqual([])
  expect(await answers).toEqual([2, 4, 2, undefined])
  expect(loads).toEqual([[1, 2, 404]])
  await nextTurn()
  expect(await double(3)).toBe(6)
  expect(loads).toEqual([[1, 2, 404], [3]])
})
