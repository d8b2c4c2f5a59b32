import { setImmediate as nextTurn } from 'node:timers/promises'
import { expect, it } from 'vitest'
import { type Lane, laneFor, STARTS_PER_TURN } from './lane.js'
import { createTurns } from './turns.js'

const lane = (id: number): Lane => laneFor({ id, accountId: id, failuresInRow: 0 }, 0)

/** Turns over lanes that each have `left[id]` attempts to start, with `room.sockets` sockets in all. */
function turnsOver(left: Map<number, number>, room = { sockets: Number.POSITIVE_INFINITY }) {
  const order: number[] = []
  const turns = createTurns({
    mayStart: () => true,
    hasRoom: () => order.length < room.sockets,
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

it('stops when the instance has no free socket; the lane whose turn it was goes first when one frees', () => {
  const room = { sockets: 3 }
  const { order, turns } = turnsOver(
    new Map([
      [1, 5],
      [2, 5],
    ]),
    room,
  )
  const [one, two] = [lane(1), lane(2)]
  turns.add(one)
  turns.add(two)
  turns.pump()
  expect(order).toEqual([1, 2, 1])
  room.sockets = 4
  turns.pump()
  expect(order).toEqual([1, 2, 1, 2])
  turns.delete(one)
  room.sockets = 6
  turns.pump()
  expect(order).toEqual([1, 2, 1, 2, 2, 2])
})

it('shares sockets freed one at a time among every lane with work, none left behind', () => {
  const room = { sockets: 4 }
  const left = new Map([1, 2, 3, 4].map((id) => [id, 10]))
  const { order, turns } = turnsOver(left, room)
  for (const id of [1, 2, 3, 4]) turns.add(lane(id))
  turns.pump()
  for (let freed = 0; freed < 8; freed++) {
    room.sockets++
    turns.pump()
  }
  expect(order).toEqual([1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4])
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
