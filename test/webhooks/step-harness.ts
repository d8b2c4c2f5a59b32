import { type Clock, systemClock } from '../../src/clock.js'
import type { DbHandle } from '../../src/db/handle.js'
import { createClaimsRepository } from '../../src/webhooks/claims.repository.js'
import { createLanes, type Lanes } from '../../src/webhooks/lanes.js'
import { createLeasesRepository } from '../../src/webhooks/leases.repository.js'
import { createStep } from '../../src/webhooks/step.js'

/**
 * A dispatcher's step for `owner` over `handle`, with lanes that never start an attempt, holding `held`
 * (idle since `idleSince`, on the clock's monotonic time), on `clock`: the step's transactions alone,
 * without a dispatcher's loop.
 */
export function stepOf(
  handle: DbHandle,
  owner: string,
  held: { id: number; accountId: number }[],
  clock: Clock = systemClock,
  idleSince = clock.monotonic(),
) {
  const lanes = lanesThatNeverStart(clock)
  lanes.add(
    held.map((row) => ({ ...row, failuresInRow: 0 })),
    idleSince,
  )
  return { ...stepOver(handle, clock, owner, lanes), lanes }
}

/**
 * A dispatcher's step for `owner` over `handle`, on `clock`, and its lanes, which hold no endpoint and never
 * start an attempt: what a test gives back to them (`giveBackEnded`) is what the steps write down.
 */
export function settlingStepOf(handle: DbHandle, owner: string, clock: Clock) {
  const lanes = lanesThatNeverStart(clock)
  return { ...stepOver(handle, clock, owner, lanes), lanes }
}

/** What these lanes' ownership read finds: every attempt is still their own. */
const target = { url: 'https://hooks.example/', secret: 'whsec_AA==', retired: [] }

function lanesThatNeverStart(clock: Clock) {
  return createLanes({
    maxInFlight: 8,
    run: async () => ({ startedAt: 0, httpStatus: 204, error: null, durationMs: 1 }),
    targetIfOwn: () => target,
    now: () => clock.monotonic(),
    mayStart: () => false,
    started: () => {},
    ended: () => {},
  })
}

/** A dispatcher's step with these lanes, over the real repositories, retries on their real schedule. */
function stepOver(handle: DbHandle, clock: Clock, owner: string, lanes: Lanes) {
  return createStep({
    handle,
    clock,
    owner,
    lanes,
    claims: createClaimsRepository(handle),
    leases: createLeasesRepository(handle),
    retryScale: 1,
  })
}

/**
 * A dispatcher's step for `owner` over `handle` whose lanes send: each attempt started is recorded in
 * `sent` and answered 204 at once, but those to endpoints `hangs` names are never answered.
 */
export function sendingStepOf(
  handle: DbHandle,
  owner: string,
  clock: Clock,
  hangs: (endpointId: number) => boolean = () => false,
) {
  const sent: number[] = []
  const lanes = createLanes({
    maxInFlight: 8,
    run: (claimed) => {
      sent.push(claimed.id)
      if (hangs(claimed.endpoint.id)) return new Promise(() => {})
      return Promise.resolve({ startedAt: clock.now(), httpStatus: 204, error: null, durationMs: 1 })
    },
    targetIfOwn: () => target,
    now: () => clock.monotonic(),
    mayStart: () => true,
    started: () => {},
    ended: () => {},
  })
  return { ...stepOver(handle, clock, owner, lanes), sent }
}
