import { setImmediate as nextTurn } from 'node:timers/promises'
import { expect, it, vi } from 'vitest'
import type { ClaimedAttempt } from './attempts.repository.js'
import { createLanes, inTurn, type LanesOptions, STARTS_PER_TURN } from './lanes.js'

const claimed = (id: number, endpointId: number): ClaimedAttempt => ({
  id,
  attempt: 1,
  redelivery: false,
  endpoint: { id: endpointId, url: `https://e${endpointId}.example/`, secrets: [] },
  event: {
    seq: id,
    type: 'pet.created',
    created_at: 0,
    resource_version: 1,
    object: '{}',
    trace_parent: null,
  },
})

/** Lanes over endpoints 1..count whose attempts never end; `started` lists the attempts run. */
function lanesOver(count: number, stillOwn: LanesOptions['stillOwn']) {
  const started: number[] = []
  const lanes = createLanes({
    maxInFlight: 1_024,
    // Never ends: every attempt started stays in flight.
    run: (attempt) => {
      started.push(attempt.id)
      return new Promise(() => {})
    },
    stillOwn,
    now: () => 0,
    mayStart: () => true,
    started: () => {},
    ended: () => {},
  })
  const endpoints = Array.from({ length: count }, (_, index) => index + 1)
  lanes.add(
    endpoints.map((id) => ({ id, accountId: 1, failuresInRow: 0 })),
    0,
  )
  return { started, enqueue: () => lanes.enqueue(endpoints.map((id) => claimed(id, id))) }
}

const allOwn = (chosen: readonly ClaimedAttempt[]) => new Set(chosen.map((attempt) => attempt.id))

it('starts at most STARTS_PER_TURN attempts per turn of the event loop, the rest at the next turns', async () => {
  const { started, enqueue } = lanesOver(40, allOwn)
  enqueue()
  expect(started).toHaveLength(STARTS_PER_TURN)
  await nextTurn()
  expect(started).toHaveLength(2 * STARTS_PER_TURN)
  await nextTurn()
  expect(started).toHaveLength(40)
  expect(new Set(started).size).toBe(40)
})

it('reads the ownership of the attempts one turn starts in one read, and starts only those still its own', async () => {
  const reads: number[][] = []
  const { started, enqueue } = lanesOver(40, (chosen) => {
    reads.push(chosen.map((attempt) => attempt.id))
    // Attempt 7 was ended by a DELETE meanwhile, 30 taken over by another instance.
    return new Set(chosen.map((attempt) => attempt.id).filter((id) => id !== 7 && id !== 30))
  })
  enqueue()
  await nextTurn()
  await nextTurn()
  expect(reads.map((ids) => ids.length)).toEqual([STARTS_PER_TURN, STARTS_PER_TURN, 40 - 2 * STARTS_PER_TURN])
  expect(new Set(reads.flat()).size).toBe(40)
  expect(started).toHaveLength(38)
  expect(started).not.toContain(7)
  expect(started).not.toContain(30)
})

it('puts attempts back when the read of their ownership fails, and starts them once it succeeds', async () => {
  let failures = 2
  const { started, enqueue } = lanesOver(3, (chosen) => {
    if (failures-- > 0) throw new Error('SQLITE_BUSY: database is locked')
    return allOwn(chosen)
  })
  enqueue()
  expect(started).toEqual([])
  await vi.waitFor(() => expect(started.sort()).toEqual([1, 2, 3]), { timeout: 2_000, interval: 20 })
  await new Promise((resolve) => setTimeout(resolve, 300))
  expect(started).toHaveLength(3)
})

it('takes lanes in turn: from the one after the last served, round to the start', () => {
  const ids = [3, 5, 8, 13, 21]
  expect(inTurn(ids, 0, 2)).toEqual([3, 5])
  expect(inTurn(ids, 5, 2)).toEqual([8, 13])
  expect(inTurn(ids, 13, 3)).toEqual([21, 3, 5])
  expect(inTurn(ids, 21, 10)).toEqual([3, 5, 8, 13, 21])
})
