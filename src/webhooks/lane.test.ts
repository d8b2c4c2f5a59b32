import { expect, it } from 'vitest'
import { inTurn } from './in-turn.js'
import { MAX_QUEUE_SIZE, QUEUE_SIZE, STEPS_QUEUED, wantFor } from './lane.js'

it('sizes a lane’s queue by what it started since the step before: QUEUE_SIZE at least, MAX_QUEUE_SIZE at most', () => {
  // A slow lane: refilled to QUEUE_SIZE once under half of it.
  expect(wantFor(QUEUE_SIZE / 2, 3)).toBe(0)
  expect(wantFor(QUEUE_SIZE / 2 - 1, 3)).toBe(QUEUE_SIZE / 2 + 1)
  expect(wantFor(0, 0)).toBe(QUEUE_SIZE)
  // A fast one: STEPS_QUEUED steps' worth.
  expect(wantFor(100, 150)).toBe(STEPS_QUEUED * 150 - 100)
  expect(wantFor(STEPS_QUEUED * 75, 150)).toBe(0)
  expect(wantFor(0, 10_000)).toBe(MAX_QUEUE_SIZE)
})

it('takes lanes in turn: from the one after the last served, round to the start', () => {
  const ids = [3, 5, 8, 13, 21]
  expect(inTurn(ids, 0, 2)).toEqual([3, 5])
  expect(inTurn(ids, 5, 2)).toEqual([8, 13])
  expect(inTurn(ids, 13, 3)).toEqual([21, 3, 5])
  expect(inTurn(ids, 21, 10)).toEqual([3, 5, 8, 13, 21])
})
