import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises'
import { expect, it, vi } from 'vitest'
import { type ClaimedAttempt, MAX_IN_FLIGHT_PER_ENDPOINT } from './attempts.repository.js'
import {
  type LanesOptions,
  MAX_IN_FLIGHT_PER_ACCOUNT,
  MAX_QUEUE_SIZE,
  QUEUE_SIZE,
  REREAD_MS,
  STARTS_PER_TURN,
} from './lane.js'
import { createLanes } from './lanes.js'
import type { EndpointTarget } from './ownership.repository.js'

const claimed = (id: number, endpointId: number): ClaimedAttempt => ({
  id,
  attempt: 1,
  redelivery: false,
  endpoint: { id: endpointId },
  event: {
    seq: id,
    type: 'pet.created',
    created_at: 0,
    resource_version: 1,
    object: '{}',
    trace_parent: null,
  },
})

/** What the lanes' ownership read finds for an attempt still their own. */
const target: EndpointTarget = { url: 'https://e1.example/', secret: 'whsec_AA==', retired: [] }

/** Lanes whose attempts succeed at once, sure of their leases, but for what `options` says. */
function lanesWith(options: Partial<LanesOptions>) {
  return createLanes({
    maxInFlight: 1_024,
    run: async () => ({ startedAt: 0, httpStatus: 204, error: null, durationMs: 1 }),
    targetIfOwn: () => target,
    now: () => 0,
    mayStart: () => true,
    started: () => {},
    ended: () => {},
    ...options,
  })
}

/** Lanes whose attempts never end (every one started stays in flight); `started` lists them. */
function lanesThatNeverEnd(options: Partial<LanesOptions> = {}) {
  const started: number[] = []
  const lanes = lanesWith({
    run: (attempt) => {
      started.push(attempt.id)
      return new Promise(() => {})
    },
    ...options,
  })
  return { started, lanes }
}

it('starts at most STARTS_PER_TURN attempts per turn of the event loop, the rest at the next turns', async () => {
  const { started, lanes } = lanesThatNeverEnd()
  const endpoints = Array.from({ length: 40 }, (_, index) => index + 1)
  lanes.add(
    endpoints.map((id) => ({ id, accountId: 1, failuresInRow: 0 })),
    0,
  )
  lanes.enqueue(endpoints.map((id) => claimed(id, id)))
  expect(started).toHaveLength(STARTS_PER_TURN)
  await nextTurn()
  expect(started).toHaveLength(2 * STARTS_PER_TURN)
  await nextTurn()
  expect(started).toHaveLength(40)
  expect(new Set(started).size).toBe(40)
})

it('gives an endpoint leased again its lane back while requests of the lane it let go are in flight', async () => {
  const { started, lanes } = lanesThatNeverEnd()
  lanes.add([{ id: 1, accountId: 1, failuresInRow: 0 }], 0)
  lanes.enqueue(Array.from({ length: 10 }, (_, index) => claimed(index + 1, 1)))
  expect(started).toHaveLength(MAX_IN_FLIGHT_PER_ENDPOINT)
  // The lease lapses (a late renewal) with 4 requests in flight; the queued 6 are given back.
  expect(lanes.remove([1])).toHaveLength(10 - MAX_IN_FLIGHT_PER_ENDPOINT)
  // Let go, its requests are still in flight: awaited at shutdown, counted in the metric.
  expect(lanes.running()).toHaveLength(MAX_IN_FLIGHT_PER_ENDPOINT)
  expect(lanes.inFlightByAccount()).toEqual(new Map([[1, MAX_IN_FLIGHT_PER_ENDPOINT]]))
  lanes.add([{ id: 1, accountId: 1, failuresInRow: 0 }], 0)
  lanes.enqueue(Array.from({ length: 6 }, (_, index) => claimed(index + 11, 1)))
  await nextTurn()
  // Still 4 in flight to the endpoint: nothing more starts until one of them ends.
  expect(started).toHaveLength(MAX_IN_FLIGHT_PER_ENDPOINT)
  expect(lanes.running()).toHaveLength(MAX_IN_FLIGHT_PER_ENDPOINT)
})

it('starts no attempt whose ownership read ends after the leases stopped being surely held, until renewed', async () => {
  let held = true
  let answer: (own: EndpointTarget | undefined) => void = () => {}
  const { started, lanes } = lanesThatNeverEnd({
    // An asynchronous read (PostgreSQL), answered when the test says.
    targetIfOwn: () => new Promise((resolve) => (answer = resolve)),
    mayStart: () => held,
  })
  lanes.add([{ id: 1, accountId: 1, failuresInRow: 0 }], 0)
  lanes.enqueue([claimed(1, 1)])
  // The read says "still yours", but by the time it answers the last renewal is too old.
  held = false
  answer(target)
  await nextTurn()
  expect(started).toEqual([])
  expect(lanes.hasWork()).toBe(true)
  // Renewed: the next step's enqueue starts it, from the head of its queue.
  held = true
  lanes.enqueue([])
  answer(target)
  await nextTurn()
  expect(started).toEqual([1])
})

it('puts an attempt whose ownership read failed back in its place in the queue, and reads again later', async () => {
  let failing = true
  const { started, lanes } = lanesThatNeverEnd({
    targetIfOwn: () => (failing ? Promise.reject(new Error('connection lost')) : Promise.resolve(target)),
  })
  lanes.add([{ id: 1, accountId: 1, failuresInRow: 0 }], 0)
  lanes.enqueue([claimed(1, 1), claimed(2, 1)])
  await nextTurn()
  // Both reads failed: nothing started, nothing held in flight, both queued again in their order.
  expect(started).toEqual([])
  expect(lanes.running()).toHaveLength(0)
  expect(lanes.hasWork()).toBe(true)
  failing = false
  await sleep(REREAD_MS * 2)
  expect(started).toEqual([1, 2])
})

it('asked again after a slow lookup: writes nothing for an attempt no longer its own; puts one it could not read back', async () => {
  const answers: (EndpointTarget | undefined | Error)[] = [
    target,
    undefined,
    target,
    new Error('connection lost'),
    target,
    target,
  ]
  const runs: number[] = []
  const started: number[] = []
  const lanes = lanesWith({
    started: (attempt) => {
      started.push(attempt.id)
    },
    targetIfOwn: () => {
      const answer = answers.shift()
      return answer instanceof Error ? Promise.reject(answer) : answer
    },
    run: async (attempt, _target, _signal, targetIfStillOwn) => {
      runs.push(attempt.id)
      if ((await targetIfStillOwn()) === undefined) return undefined
      return { startedAt: 0, httpStatus: 204, error: null, durationMs: 1 }
    },
  })
  lanes.add([{ id: 1, accountId: 1, failuresInRow: 0 }], 0)
  // One at a time: the first is ended meanwhile; the second's second read fails, so it starts again later.
  lanes.enqueue([claimed(1, 1)])
  await vi.waitFor(() => expect(lanes.running()).toHaveLength(0))
  lanes.enqueue([claimed(2, 1)])
  await vi.waitFor(() => expect(runs).toEqual([1, 2, 2]), { timeout: REREAD_MS * 5 })
  await vi.waitFor(() => expect(lanes.takeEnded().map((ended) => ended.claimed.id)).toEqual([2]))
  expect(answers).toEqual([])
  // Started twice, told once (the lag metric samples it once).
  expect(started).toEqual([1, 2])
})

it('asks, for a lane that started many attempts since the last step (or waited for its turn since), for enough to last STEPS_QUEUED steps', async () => {
  let started = 0
  const lanes = lanesWith({
    started: () => {
      started++
    },
  })
  lanes.add([{ id: 1, accountId: 1, failuresInRow: 0 }], 0)
  expect(lanes.wants()).toEqual([{ endpointId: 1, count: QUEUE_SIZE }])
  lanes.enqueue(Array.from({ length: 300 }, (_, index) => claimed(index + 1, 1)))
  await vi.waitFor(() => expect(started).toBe(300), { timeout: 5_000, interval: 5 })
  // 300 started since the last step: STEPS_QUEUED × 300 = 1,200, so MAX_QUEUE_SIZE; asking changes nothing.
  expect(lanes.wants()).toEqual([{ endpointId: 1, count: MAX_QUEUE_SIZE }])
  expect(lanes.wants()).toEqual([{ endpointId: 1, count: MAX_QUEUE_SIZE }])
  // A step planned that left it for a later step's turn: still counted, still as much.
  lanes.counted(new Set([1]))
  expect(lanes.wants()).toEqual([{ endpointId: 1, count: MAX_QUEUE_SIZE }])
  // Its turn came (or it was not running low): counted again from nothing, so back to QUEUE_SIZE.
  lanes.counted(new Set())
  expect(lanes.wants()).toEqual([{ endpointId: 1, count: QUEUE_SIZE }])
})

it('hangs up on every request in flight and gives their attempts back instead of an outcome; later ones start', async () => {
  const signals = new Map<number, AbortSignal>()
  const lanes = lanesWith({
    run: (attempt, _target, signal) =>
      new Promise((resolve) => {
        signals.set(attempt.id, signal)
        signal.addEventListener('abort', () =>
          resolve({ startedAt: 0, httpStatus: null, error: 'aborted', durationMs: 1 }),
        )
      }),
  })
  lanes.add([{ id: 1, accountId: 1, failuresInRow: 0 }], 0)
  lanes.enqueue([claimed(1, 1), claimed(2, 1)])
  expect(lanes.hangUp()).toBe(2)
  await nextTurn()
  expect(lanes.takeEnded()).toEqual([])
  expect(lanes.takeHungUp().map((attempt) => attempt.id)).toEqual([1, 2])
  expect(lanes.running()).toHaveLength(0)
  lanes.enqueue([claimed(3, 1)])
  expect(signals.get(3)?.aborted).toBe(false)
})

it('counts what it holds per endpoint until a step takes it to write down: queued, in flight, ended', async () => {
  let finish: () => void = () => {}
  const ends = new Promise<void>((resolve) => {
    finish = resolve
  })
  const lanes = lanesWith({
    run: async (attempt) => {
      if (attempt.endpoint.id === 2) await ends
      return { startedAt: 0, httpStatus: 204, error: null, durationMs: 1 }
    },
  })
  lanes.add(
    [1, 2].map((id) => ({ id, accountId: 1, failuresInRow: 0 })),
    0,
  )
  const toEndpoint2 = Array.from({ length: MAX_IN_FLIGHT_PER_ENDPOINT + 2 }, (_, index) =>
    claimed(index + 11, 2),
  )
  lanes.enqueue([...Array.from({ length: 3 }, (_, index) => claimed(index + 1, 1)), ...toEndpoint2])
  await nextTurn()
  // Endpoint 1's three ended at once and wait for a step; endpoint 2 has 4 in flight and 2 queued.
  expect(lanes.held()).toEqual(
    new Map([
      [1, 3],
      [2, MAX_IN_FLIGHT_PER_ENDPOINT + 2],
    ]),
  )
  expect(lanes.takeEnded()).toHaveLength(3)
  expect(lanes.held()).toEqual(
    new Map([
      [1, 0],
      [2, MAX_IN_FLIGHT_PER_ENDPOINT + 2],
    ]),
  )
  // Let go: its queued attempts are given back; those in flight are still held until written down.
  expect(lanes.remove([2])).toHaveLength(2)
  expect(lanes.held()).toEqual(
    new Map([
      [1, 0],
      [2, MAX_IN_FLIGHT_PER_ENDPOINT],
    ]),
  )
  finish()
  await nextTurn()
  expect(lanes.held()).toEqual(
    new Map([
      [1, 0],
      [2, MAX_IN_FLIGHT_PER_ENDPOINT],
    ]),
  )
  expect(lanes.takeEnded()).toHaveLength(MAX_IN_FLIGHT_PER_ENDPOINT)
  expect(lanes.held()).toEqual(new Map([[1, 0]]))
})

it('shares the instance’s sockets among every lane with work as they free one at a time', async () => {
  const finishers: (() => void)[] = []
  const startedBy: number[] = []
  const lanes = lanesWith({
    maxInFlight: 4,
    run: (attempt) => {
      startedBy.push(attempt.endpoint.id)
      return new Promise((resolve) =>
        finishers.push(() => resolve({ startedAt: 0, httpStatus: 204, error: null, durationMs: 1 })),
      )
    },
  })
  const endpoints = [1, 2, 3, 4, 5, 6, 7, 8]
  lanes.add(
    endpoints.map((id) => ({ id, accountId: id, failuresInRow: 0 })),
    0,
  )
  lanes.enqueue(endpoints.flatMap((id) => [0, 1, 2].map((n) => claimed(100 * id + n, id))))
  for (let freed = 0; freed < 12; freed++) {
    finishers.shift()?.()
    await nextTurn()
  }
  expect(startedBy).toHaveLength(16)
  expect(new Set(startedBy.slice(0, 8))).toEqual(new Set(endpoints))
  expect(new Set(startedBy.slice(8))).toEqual(new Set(endpoints))
})

it('queues an attempt once, however often a step hands it over (in one refill or in two)', async () => {
  const { started, lanes } = lanesThatNeverEnd({ maxInFlight: 0 })
  lanes.add([{ id: 1, accountId: 1, failuresInRow: 0 }], 0)
  lanes.enqueue([claimed(1, 1), claimed(2, 1), claimed(1, 1)])
  lanes.enqueue([claimed(2, 1), claimed(3, 1)])
  expect(lanes.held()).toEqual(new Map([[1, 3]]))
  expect(started).toEqual([])
})

it('holds an account to MAX_IN_FLIGHT_PER_ACCOUNT requests in flight over all its lanes, deleted endpoints’ included', async () => {
  const finishers = new Map<number, () => void>()
  const startedBy: number[] = []
  const lanes = lanesWith({
    run: (attempt) => {
      startedBy.push(attempt.endpoint.id)
      return new Promise((resolve) =>
        finishers.set(attempt.id, () =>
          resolve({ startedAt: 0, httpStatus: 204, error: null, durationMs: 1 }),
        ),
      )
    },
  })
  // Account 1 made 10 endpoints whose requests hang, deleted them (let go with requests in flight), made
  // 10 more; account 2 has one endpoint.
  const first = Array.from({ length: 10 }, (_, index) => index + 1)
  const second = Array.from({ length: 10 }, (_, index) => index + 11)
  const queueFor = (ids: number[]) =>
    ids.flatMap((id) =>
      Array.from({ length: MAX_IN_FLIGHT_PER_ENDPOINT }, (_, n) => claimed(100 * id + n, id)),
    )
  lanes.add(
    first.map((id) => ({ id, accountId: 1, failuresInRow: 0 })),
    0,
  )
  lanes.enqueue(queueFor(first))
  await vi.waitFor(() => expect(startedBy).toHaveLength(MAX_IN_FLIGHT_PER_ACCOUNT))
  lanes.remove(first)
  lanes.add(
    [
      ...second.map((id) => ({ id, accountId: 1, failuresInRow: 0 })),
      { id: 99, accountId: 2, failuresInRow: 0 },
    ],
    0,
  )
  lanes.enqueue([...queueFor(second), claimed(9_901, 99)])
  await vi.waitFor(() => expect(startedBy).toContain(99))
  await nextTurn()
  expect(startedBy).toHaveLength(MAX_IN_FLIGHT_PER_ACCOUNT + 1)
  expect(lanes.inFlightByAccount()).toEqual(
    new Map([
      [1, MAX_IN_FLIGHT_PER_ACCOUNT],
      [2, 1],
    ]),
  )
  // One of the deleted endpoints' requests ends: one of the new endpoints' starts in its place.
  finishers.get(101)?.()
  await vi.waitFor(() => expect(startedBy).toHaveLength(MAX_IN_FLIGHT_PER_ACCOUNT + 2))
  expect(second).toContain(startedBy.at(-1))
  expect(lanes.inFlightByAccount().get(1)).toBe(MAX_IN_FLIGHT_PER_ACCOUNT)
})
