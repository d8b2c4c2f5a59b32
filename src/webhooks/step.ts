/**
 * One step of a webhook dispatcher (dispatcher.ts runs them): a plan from cheap reads, then one
 * transaction that renews the leases, writes down what ended, fans committed events out, leases
 * endpoints and refills the lanes' queues, then the lanes as it left them. Every step is bounded
 * (ENDPOINTS_PER_STEP, SETTLED_PER_STEP), whatever the number of endpoints and of attempts that ended.
 */
import type { Clock } from '../clock.js'
import { createDatabaseClock, databaseNow } from '../db/database-clock.js'
import type { DbHandle } from '../db/handle.js'
import { createEventsRepository } from '../events/events.repository.js'
import type { ClaimedAttempt } from './attempts.repository.js'
import type { ClaimsRepository } from './claims.repository.js'
import type { DispatcherObserver } from './dispatcher.port.js'
import { createEndedEndpoints } from './ended-endpoints.js'
import { createEndingsRepository } from './endings.repository.js'
import { createFanOut } from './fan-out.js'
import { inTurn } from './in-turn.js'
import { wantFor } from './lane.js'
import type { Lanes } from './lanes.js'
import type { LeasesRepository } from './leases.repository.js'
import { createSettler } from './settle.js'
import { createUpkeep } from './upkeep.js'

/** An endpoint lease lasts this long (database time) unless renewed. */
export const LEASE_MS = 5_000
/**
 * Leases are renewed this often; an instance that could not renew for LEASE_MS - RENEW_MS starts nothing
 * and hangs up on its requests in flight (dispatcher.ts looks every FENCE_CHECK_MS), a second before
 * another instance may take its endpoints over. Both are measured on this process's monotonic clock (and on
 * SQLite's, the host's wall clock, when that was set forward: `sinceRenewal`).
 */
export const RENEW_MS = 1_000
/** Endpoints one instance sends to at once. */
export const MAX_LANES = 1_024
/** A lane with nothing to send is let go after this long (so that another instance may take it). */
export const LINGER_MS = 1_000
/**
 * At MAX_LANES, with endpoints that have waited this long for a lease, the lanes held at least this long
 * make room, the longest held first, one for each endpoint that waits (`lanes.rotate`): every endpoint
 * gets its turn however many have work, each holding its lease and waiting for it this long at least.
 */
export const HOLD_MS = 10_000
/**
 * Endpoints a step leases, and endpoints whose queues it refills, at most: a step's transaction is
 * bounded whatever the number of endpoints (on SQLite it holds the write lock and the thread it runs on).
 * A step that left more to lease or refill is followed at once, so 1,000 lanes are served over a few
 * steps, in turn, without waiting BUSY_MS between them.
 */
export const ENDPOINTS_PER_STEP = 100
/**
 * Ended attempts a step writes down at most, the oldest first (the rest wait for the next step, at once):
 * however many fail at once, the step stays within the database's deadline, which its renewal shares.
 */
export const SETTLED_PER_STEP = 2_000

export interface StepDeps {
  handle: DbHandle
  clock: Clock
  /** The dispatcher's owner id (its leases and the attempts it holds). */
  owner: string
  lanes: Lanes
  claims: ClaimsRepository
  leases: LeasesRepository
  retryScale: number
  observe?: DispatcherObserver | undefined
}

export interface StepResult {
  busy: boolean
  more: boolean
}

export function createStep(deps: StepDeps) {
  const { handle, clock, owner, lanes, claims, leases } = deps
  const fanOut = createFanOut(handle)
  const events = createEventsRepository(handle)
  const endings = createEndingsRepository(handle)
  const settler = createSettler(handle, { retryScale: deps.retryScale })
  const withoutEnded = createEndedEndpoints(handle)
  const upkeep = createUpkeep(handle, clock)
  /** What the plan's reads judge due times and leases by: the database's clock, as the transaction does. */
  const databaseClock = createDatabaseClock(handle, clock)
  /**
   * When the last step that renewed every lease (or, holding none, leased some) started, on this process's
   * monotonic clock and on the database's. Not on this host's wall clock (but where it is the database's):
   * set back, it kept the step from renewing and the fence sure of leases that had lapsed, while another
   * instance took them over.
   */
  let renewed = { at: Number.NEGATIVE_INFINITY, databaseAt: Number.NEGATIVE_INFINITY }
  /**
   * Attempts taken out of the lanes of ended endpoints (their account's key revoked or expired, or deleted
   * or disabled), for the next step to end unsent, with why, rather than send them in turn.
   */
  let unqueued: ClaimedAttempt[] = []
  /** The last endpoint a step refilled: the next one starts after it, so every lane gets its turn. */
  let refilledUpTo = 0
  /**
   * A step's write failed, and may have committed all the same (PostgreSQL: its COMMIT reached the server
   * but the answer did not): the next step renews, which brings back any lease it took unknown to its lanes.
   */
  let unsure = false

  /**
   * How long since the last renewal started, on the monotonic clock. On SQLite the database's clock, which
   * the leases lapse by, is this host's wall clock: set forward, it ends them early for every process on
   * the host, so there the longer of the two counts.
   */
  function sinceRenewal(at = clock.monotonic(), databaseAt = clock.now()): number {
    const passed = at - renewed.at
    return handle.dialect === 'sqlite' ? Math.max(passed, databaseAt - renewed.databaseAt) : passed
  }

  /**
   * What a step has to do, from cheap reads (each a hint: the transaction judges on the database's
   * clock); undefined when nothing.
   */
  async function plan(claim: boolean) {
    // Lanes' idle and held times, and the renewal's, on the monotonic clock; due times and leases on the
    // database's.
    const startedAt = clock.monotonic()
    const dbNow = await databaseClock.now()
    const renew = (lanes.size > 0 && sinceRenewal(startedAt, dbNow) >= RENEW_MS) || unsure
    // Leasing renews nothing already held: it dates this instance's leases only when it held none.
    const noneHeld = lanes.size === 0
    const fan = claim && (await events.anyWaiting()) ? await fanOut.demand(dbNow, lanes.held()) : undefined
    const acquire = claim && lanes.size < MAX_LANES && (await leases.anyClaimable(dbNow))
    // Before the lanes say what they want: one making room is refilled no more.
    if (claim && lanes.size >= MAX_LANES) await makeRoom(startedAt, dbNow)
    const low = claim ? lanes.wants() : []
    const takeable = await claims.takeableAmong(
      low.map((want) => want.endpointId),
      owner,
      dbNow,
    )
    const turn = new Set(inTurn(takeable, refilledUpTo, ENDPOINTS_PER_STEP))
    refilledUpTo = [...turn].at(-1) ?? refilledUpTo
    const wants = low.filter((want) => turn.has(want.endpointId))
    // Those with attempts to take that this step's bound left for a later one keep counting what they start.
    lanes.counted(new Set(takeable.filter((id) => !turn.has(id))))
    // Taken after every read that may fail: what ended is never dropped with a failed plan.
    const ended = lanes.takeEnded(SETTLED_PER_STEP)
    // A lane with attempts to take is not let go, even when its turn to refill is a later step's, nor one
    // with outcomes this step's bound left for the next (letting go gives its pending attempts back).
    const busyLanes = new Set([...takeable, ...lanes.endedEndpoints()])
    const idle = lanes.idleSince(startedAt - LINGER_MS).filter((id) => !busyLanes.has(id))
    const hungUp = lanes.takeHungUp()
    const toEnd = unqueued
    unqueued = []
    const more = takeable.length > turn.size || lanes.endedCount > 0
    const work = { ended, hungUp, toEnd, startedAt, dbNow, renew, noneHeld, fan, acquire, idle, wants, more }
    const due = wants.length > 0 || hungUp.length > 0 || toEnd.length > 0
    return ended.length > 0 || renew || fan || acquire || due || idle.length > 0 ? work : undefined
  }
  type Plan = NonNullable<Awaited<ReturnType<typeof plan>>>

  /**
   * Lanes held longest make room for the endpoints that wait; their queued attempts go back (`toEnd`).
   * `now` is this process's monotonic time (a lane's), `dbNow` the database's (an endpoint's).
   */
  async function makeRoom(now: number, dbNow: number): Promise<void> {
    const waiting = await leases.waitingSince(dbNow - HOLD_MS, ENDPOINTS_PER_STEP)
    const room = waiting - lanes.rotating()
    if (room > 0) unqueued.push(...lanes.rotate(now - HOLD_MS, room))
  }

  /**
   * One transaction: leases renewed, what ended written down, then events fanned out, endpoints leased
   * and the lanes' queues refilled; idle lanes let go.
   */
  function write(work: Plan) {
    const { ended, wants, idle } = work
    return handle.write(async (trx) => {
      const sentAt = clock.monotonic()
      const now = await databaseNow(handle, trx, clock)
      databaseClock.learn(now, sentAt)
      // Endpoint rows before their attempts, the order a disabling PATCH or a DELETE takes them in, and
      // all in one id order (PostgreSQL): those it touches, those it may let go, and every held one when
      // their leases are renewed. A redelivery locks an account's rows in that order too, and the leasing
      // below skips rows others hold: the two never wait on each other in a circle.
      const touched = [
        ...wants.map((want) => want.endpointId),
        ...ended.map((end) => end.claimed.endpoint.id),
        ...[...work.hungUp, ...work.toEnd].map((claimed) => claimed.endpoint.id),
        ...idle,
      ]
      await leases.lockRows(trx, [...new Set(work.renew ? [...lanes.ids(), ...touched] : touched)])
      const renewed = work.renew ? await leases.renew(trx, owner, now, LEASE_MS) : undefined
      const held = renewed ? renewed.map((endpoint) => endpoint.id) : lanes.ids()
      // Leases with no lane here: taken by a step whose commit was not known to have happened (`unsure`).
      const known = renewed ? new Set(lanes.ids()) : undefined
      const unknown = renewed?.filter((endpoint) => !known?.has(endpoint.id)) ?? []
      // Once a renewal: the lanes of endpoints ended meanwhile (a key revoked or expired) stop sending.
      const closed = work.renew ? (await endings.endedIn(trx, held, now)).map((row) => row.id) : []
      const settled = await settler.settleAll(trx, ended, owner, now)
      // Hung up on, or taken out of a lane whose endpoint ended but turned out fine: pending again, for
      // whichever instance holds the endpoint (this one, if it still does).
      const stillOwed = await withoutEnded(trx, work.toEnd, now)
      await claims.release(
        trx,
        [...work.hungUp, ...stillOwed].map((claimed) => claimed.id),
        owner,
      )
      if (work.fan?.kind === 'fan') await fanOut.fanOut(trx, now, work.fan.events)
      else if (work.fan?.kind === 'pass') await fanOut.passOver(trx)
      const limit = Math.min(MAX_LANES - lanes.size, ENDPOINTS_PER_STEP)
      const acquired = work.acquire ? await leases.acquire(trx, { owner, now, leaseMs: LEASE_MS, limit }) : []
      const fresh = acquired.map((endpoint) => ({ endpointId: endpoint.id, count: wantFor(0) }))
      const stillHeld = new Set(held)
      const kept = wants.filter((want) => stillHeld.has(want.endpointId))
      const taken = await withoutEnded(
        trx,
        await claims.take(trx, { owner, wants: [...kept, ...fresh], now }),
        now,
      )
      const withWork = new Set(taken.map((claimed) => claimed.endpoint.id))
      const letGo = idle.filter((id) => stillHeld.has(id) && !withWork.has(id))
      await leases.release(trx, owner, letGo, now)
      await claims.releaseAllOf(trx, letGo, owner)
      return { held, closed, settled, acquired, unknown, taken, letGo }
    })
  }

  /**
   * One step: its upkeep (upkeep.ts), its plan, its transaction, then the lanes as it left them.
   * `busy` when it did anything; `more` when its bounds left endpoints to lease or lanes to refill
   * (ENDPOINTS_PER_STEP), ended attempts to write down (SETTLED_PER_STEP), events to number
   * (PUBLISH_BOUND) or ended endpoints' attempts to end (ENDING_BATCH).
   */
  async function step(claim: boolean): Promise<StepResult> {
    const before = claim ? await upkeep() : { busy: false, more: false }
    const work = await plan(claim)
    if (!work) return before
    // Not written (a deadline, a lost connection): what ended, and what ended lanes had queued, is written
    // by the next step instead, so no attempt stays held by this dispatcher with nothing to end it.
    const result = await write(work).catch((error: unknown) => {
      lanes.giveBackEnded(work.ended)
      lanes.putBackHungUp(work.hungUp)
      // Had it committed, the lanes it refilled hold attempts taken for them that they never queued: they
      // go once idle, which gives those back (`releaseAllOf`), and the next step renews (`unsure`).
      const refilled = lanes.retire(work.wants.map((want) => want.endpointId))
      unqueued = [...work.toEnd, ...refilled, ...unqueued]
      unsure = true
      throw error
    })
    unsure = false
    if (work.renew || (work.acquire && work.noneHeld))
      renewed = { at: work.startedAt, databaseAt: work.dbNow }
    for (const outcome of result.settled) deps.observe?.settled(outcome)
    const held = new Set(result.held)
    lanes.remove([...result.letGo, ...lanes.ids().filter((id) => !held.has(id))])
    // Taken out before anything more may start; the next step ends them.
    unqueued.push(...lanes.unqueue(result.closed))
    lanes.add([...result.acquired, ...result.unknown], work.startedAt)
    // A lease taken back may come with attempts taken for it that its lane never queued: it goes once
    // idle (refilled no more), which gives those back, and is leased again.
    unqueued.push(...lanes.retire(result.unknown.map((endpoint) => endpoint.id)))
    lanes.enqueue(result.taken)
    const more = work.more || before.more || result.acquired.length === ENDPOINTS_PER_STEP
    // A fan-out tried counts even when it finished no event (one with over 2,000 takers takes steps).
    // Passing events over (no endpoint enabled) is no reason to step again sooner than a poll.
    const fanned = work.fan?.kind === 'fan'
    // Attempts taken out of ended lanes are ended by the next step, soon.
    const ends = work.ended.length > 0 || work.toEnd.length > 0 || unqueued.length > 0
    const busy = ends || fanned || before.busy || result.taken.length > 0 || result.acquired.length > 0
    return { busy, more }
  }

  return {
    step,
    /** Whether the leases are surely still this instance's (renewed less than LEASE_MS - RENEW_MS ago). */
    surelyHeld: () => sinceRenewal() < LEASE_MS - RENEW_MS,
  }
}
