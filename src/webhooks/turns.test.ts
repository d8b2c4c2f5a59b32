import { setImmediate as nextTurn } from 'node:timers/promises'
import { expect, it } from 'vitest'
import { type Lane, STARTS_PER_TURN } from './lane.js'
import { createTurns } from './turns.js'

const lane = (id: number): Lane => ({
  id,
  accountId: id,
  queue: [],
  running: new Map(),
  failuresInRow: 0,
  idleSince: undefined,
  startedSinceStep: 0,
})

/** Turns over lanes that each have `left[id]` attempts to start. */
function turnsOver(left: Map<number, number>) {
  const order: number[] = []
  const turns = createTurns({
    mayStart: () => true,
    hasRoom: () => true,
    startNext(lane) {
      const count = left.get(lane.id) ?? 0
      if (count === 0) return false
      left.set(lane.id, count - 1)
      order.push(lane.id)
      return true
    },
  })
  return { order, turns }
}

it('lets lanes start one attempt each in turn, however many one of them has, at most STARTS_PER_TURN a turn', async () => {
  const { order, turns } = turnsOver(
    new Map([
      [1, 30],
      [2, 2],
      [3, 30],
    ]),
  )
  for (const id of [1, 2, 3]) turns.add(lane(id))
  turns.pump()
  expect(order.slice(0, 7)).toEqual([1, 2, 3, 1, 2, 3, 1])
  expect(order.slice(7, STARTS_PER_TURN)).toEqual([3, 1, 3, 1, 3, 1, 3, 1, 3])
  expect(order).toHaveLength(STARTS_PER_TURN)
  await nextTurn()
  expect(order).toHaveLength(2 * STARTS_PER_TURN)
  for (let turn = 0; turn < 4; turn++) await nextTurn()
  expect(order).toHaveLength(62)
})

it('starts nothing while the leases are not surely held', () => {
  const started: number[] = []
  const turns = createTurns({
    mayStart: () => false,
    hasRoom: () => true,
    startNext: (lane) => started.push(lane.id) > 0,
  })
  turns.add(lane(1))
  turns.pump()
  expect(started).toEqual([])
})
