import { setImmediate as nextTurn } from 'node:timers/promises'
import { expect, it, vi } from 'vitest'
import { type ClaimedAttempt, MAX_IN_FLIGHT_PER_ENDPOINT } from './attempts.repository.js'
import {
  createLanes,
  inTurn,
  type LanesOptions,
  MAX_QUEUE_SIZE,
  QUEUE_SIZE,
  STARTS_PER_TURN,
  STEPS_QUEUED,
  wantFor,
} from './lanes.js'

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
  return { started, lanes, enqueue: () => lanes.enqueue(endpoints.map((id) => claimed(id, id))) }
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

it('asks, for a lane that started many attempts since the last step, for enough to last STEPS_QUEUED steps', async () => {
  let started = 0
  const lanes = createLanes({
    maxInFlight: 1_024,
    run: async () => ({ startedAt: 0, httpStatus: 204, error: null, durationMs: 1 }),
    stillOwn: allOwn,
    now: () => 0,
    mayStart: () => true,
    started: () => {
      started++
    },
    ended: () => {},
  })
  lanes.add([{ id: 1, accountId: 1, failuresInRow: 0 }], 0)
  expect(lanes.wants()).toEqual([{ endpointId: 1, count: QUEUE_SIZE }])
  lanes.enqueue(Array.from({ length: 300 }, (_, index) => claimed(index + 1, 1)))
  await vi.waitFor(() => expect(started).toBe(300), { timeout: 5_000, interval: 5 })
  // 300 started since the last step: STEPS_QUEUED × 300 = 1,200, so MAX_QUEUE_SIZE.
  expect(lanes.wants()).toEqual([{ endpointId: 1, count: MAX_QUEUE_SIZE }])
  // Nothing started since: back to QUEUE_SIZE.
  expect(lanes.wants()).toEqual([{ endpointId: 1, count: QUEUE_SIZE }])
})

it('gives an endpoint leased again its lane back while requests of the lane it let go are in flight', async () => {
  const { started, lanes } = lanesOver(1, allOwn)
  lanes.enqueue(Array.from({ length: 10 }, (_, index) => claimed(index + 1, 1)))
  expect(started).toHaveLength(MAX_IN_FLIGHT_PER_ENDPOINT)
  // The lease lapses (a late renewal) with 4 requests in flight; the queued 6 are given back.
  expect(lanes.remove([1])).toHaveLength(10 - MAX_IN_FLIGHT_PER_ENDPOINT)
  lanes.add([{ id: 1, accountId: 1, failuresInRow: 0 }], 0)
  lanes.enqueue(Array.from({ length: 6 }, (_, index) => claimed(index + 11, 1)))
  await nextTurn()
  // Still 4 in flight to the endpoint: nothing more starts until one of them ends.
  expect(started).toHaveLength(MAX_IN_FLIGHT_PER_ENDPOINT)
  expect(lanes.running()).toHaveLength(MAX_IN_FLIGHT_PER_ENDPOINT)
})

it('takes lanes in turn: from the one after the last served, round to the start', () => {
  const ids = [3, 5, 8, 13, 21]
  expect(inTurn(ids, 0, 2)).toEqual([3, 5])
  expect(inTurn(ids, 5, 2)).toEqual([8, 13])
  expect(inTurn(ids, 13, 3)).toEqual([21, 3, 5])
  expect(inTurn(ids, 21, 10)).toEqual([3, 5, 8, 13, 21])
})
