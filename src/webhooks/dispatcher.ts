import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import { databaseNow } from '../db/database-clock.js'
import type { DbHandle } from '../db/handle.js'
import { publishEvents } from '../events/events.publisher.js'
import { createEventsRepository } from '../events/events.repository.js'
import type { AddressRules } from './address.js'
import { makeAttempt } from './attempt.js'
import type { ClaimedAttempt } from './attempts.repository.js'
import { createClaimsRepository } from './claims.repository.js'
import type { Dispatcher, DispatcherObserver } from './dispatcher.port.js'
import { createEndedAccounts } from './ended-accounts.js'
import { createFanOut } from './fan-out.js'
import { createIdleWaiters } from './idle-waiters.js'
import { inTurn, wantFor } from './lane.js'
import { createLanes } from './lanes.js'
import { createLeasesRepository, ownerIdOf } from './leases.repository.js'
import { createAgentPool } from './send.js'
import { createSettler } from './settle.js'

/** How often an idle dispatcher looks for work. */
export const POLL_MS = 200
/**
 * While busy, one step at most this often: each step is one transaction (one commit, one fsync on
 * SQLite) that writes down every attempt that ended since the last, fans out and fills the lanes'
 * queues. Attempts themselves start as soon as their lane has a free place, between steps.
 */
export const BUSY_MS = 50
/** An endpoint lease lasts this long (database time) unless renewed. */
export const LEASE_MS = 5_000
/**
 * Leases are renewed this often; an instance that could not renew for LEASE_MS - RENEW_MS starts nothing
 * and hangs up on its requests in flight (looked at every FENCE_CHECK_MS), a second before another
 * instance may take its endpoints over.
 */
export const RENEW_MS = 1_000
const FENCE_CHECK_MS = 250
/** Endpoints one instance sends to at once, and requests it has in flight over all of them. */
export const MAX_LANES = 1_024
export const MAX_IN_FLIGHT = 1_024
/** A lane with nothing to send is let go after this long (so that another instance may take it). */
export const LINGER_MS = 1_000
/**
 * Endpoints a step leases, and endpoints whose queues it refills, at most: a step's transaction is
 * bounded whatever the number of endpoints (on SQLite it holds the write lock and the thread it runs on).
 * A step that left more to lease or refill is followed at once, so 1,000 lanes are served over a few
 * steps, in turn, without waiting BUSY_MS between them.
 */
export const ENDPOINTS_PER_STEP = 100

export interface DispatcherDeps {
  handle: DbHandle
  logger: Logger
  rules: AddressRules
  timeoutMs: number
  retryScale: number
  /**
   * Due times, leases and idle times are read from it (on SQLite it is the database's clock; on
   * PostgreSQL the database's own is): the tests' fake clock decides when a retry is due. Steps are
   * timed by real timers.
   */
  clock: Clock
  /** Told of every attempt's end, and of the commit-to-first-attempt lag. */
  observe?: DispatcherObserver
}

/**
 * The delivery loop of one instance (CONTRACT §14). It leases endpoints that have due attempts (one
 * instance per endpoint at a time), keeps a queue per endpoint and sends from it as fast as the
 * endpoint's 4 places allow (lanes.ts), and in one transaction per step writes down what ended, renews
 * its leases, fans committed events out and refills the queues. Any number of instances run one each
 * over the same database; every time is the database's.
 */
export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const { handle, logger, clock } = deps
  const owner = ownerIdOf(randomUUID())
  const fanOut = createFanOut(handle)
  const events = createEventsRepository(handle)
  const claims = createClaimsRepository(handle)
  const leases = createLeasesRepository(handle)
  const settler = createSettler(handle, { retryScale: deps.retryScale })
  const withoutEndedAccounts = createEndedAccounts(handle)
  const agents = createAgentPool({ timeoutMs: deps.timeoutMs })
  /** Local time of the start of the last step that renewed every lease (or leased them). */
  let renewedAt = 0
  let timer: NodeJS.Timeout | undefined
  let fence: NodeJS.Timeout | undefined
  let timerDue = Number.POSITIVE_INFINITY
  let stepping: Promise<boolean> | undefined
  let stopping = false
  /** Steps begun so far, and who waits for an idle step begun after a given one (`whenIdle`). */
  let stepsBegun = 0
  /** Whether the last step left work its bounds kept it from (ENDPOINTS_PER_STEP). */
  let leftForNext = false
  /** The last endpoint a step refilled: the next one starts after it, so every lane gets its turn. */
  let refilledUpTo = 0
  const idleWaiters = createIdleWaiters()
  const lanes = createLanes({
    maxInFlight: MAX_IN_FLIGHT,
    run: (claimed, signal) =>
      makeAttempt(claimed, {
        rules: deps.rules,
        timeoutMs: deps.timeoutMs,
        signal,
        agents,
        now: () => clock.now(),
      }),
    isStillOwn: (claimed) => claims.isStillOwn(claimed.id, owner),
    now: () => clock.now(),
    mayStart: () => !stopping && surelyHeld(),
    started: (claimed: ClaimedAttempt) => {
      if (claimed.attempt === 1 && !claimed.redelivery) {
        deps.observe?.lag(Math.max(0, clock.now() - claimed.event.created_at) / 1000)
      }
    },
    ended: () => wake(BUSY_MS),
  })

  /** Whether the leases are surely still this instance's (renewed less than LEASE_MS - RENEW_MS ago). */
  const surelyHeld = () => clock.now() - renewedAt < LEASE_MS - RENEW_MS

  /**
   * Not renewed in time (a database that does not answer, a freeze): the requests in flight are hung up
   * on before another instance may take their endpoints over, so it never sends beside them.
   */
  function hangUpIfUnsure(): void {
    if (stopping || surelyHeld()) return
    const requests = lanes.hangUp()
    if (requests > 0)
      logger.warn({ requests }, 'webhook leases not renewed in time: requests in flight hung up on')
  }

  /** Runs a step soon (within `delayMs`), never two at once. */
  function wake(delayMs: number): void {
    if (stopping || Date.now() + delayMs >= timerDue) return
    clearTimeout(timer)
    timerDue = Date.now() + delayMs
    timer = setTimeout(() => {
      timerDue = Number.POSITIVE_INFINITY
      void run()
    }, delayMs)
  }

  async function run(): Promise<void> {
    if (stepping) return wake(BUSY_MS)
    const begun = ++stepsBegun
    let failed = false
    stepping = step(true).catch((error: unknown) => {
      logger.warn({ err: error }, 'webhook dispatch failed; trying again shortly')
      idleWaiters.tell(begun, new Error('a webhook dispatch step failed', { cause: error }))
      failed = true
      return false
    })
    const busy = await stepping
    stepping = undefined
    if (!busy && !failed && !lanes.hasWork()) idleWaiters.tell(begun)
    // A step that left endpoints to lease or lanes to refill for the next is followed at once.
    wake(busy && leftForNext && !failed ? 0 : busy ? BUSY_MS : POLL_MS)
  }

  /**
   * What a step has to do, from cheap reads (each a hint: the transaction judges on the database's
   * clock); undefined when nothing.
   */
  async function plan(claim: boolean) {
    const startedAt = clock.now()
    const renew = lanes.size > 0 && startedAt - renewedAt >= RENEW_MS
    // PostgreSQL: what committed since is numbered first (one short transaction, one publisher at once).
    if (claim && (await events.anyUnpublished())) await handle.write((trx) => publishEvents(handle, trx))
    const fan = claim && (await events.anyWaiting()) && (await fanOut.anyHungry(startedAt))
    const acquire = claim && lanes.size < MAX_LANES && (await leases.anyClaimable(startedAt))
    const low = claim ? lanes.wants() : []
    const takeable = await claims.takeableAmong(
      low.map((want) => want.endpointId),
      owner,
      startedAt,
    )
    const turn = new Set(inTurn(takeable, refilledUpTo, ENDPOINTS_PER_STEP))
    refilledUpTo = [...turn].at(-1) ?? refilledUpTo
    const wants = low.filter((want) => turn.has(want.endpointId))
    // A lane with attempts to take is not let go, even when its turn to refill is a later step's.
    const toTake = new Set(takeable)
    const idle = lanes.idleSince(startedAt - LINGER_MS).filter((id) => !toTake.has(id))
    // Taken after every read that may fail: what ended is never dropped with a failed plan.
    const ended = lanes.takeEnded()
    const hungUp = lanes.takeHungUp()
    const more = takeable.length > turn.size
    const work = { ended, hungUp, startedAt, renew, fan, acquire, idle, wants, more }
    const due = wants.length > 0 || hungUp.length > 0
    return ended.length > 0 || renew || fan || acquire || due || idle.length > 0 ? work : undefined
  }
  type Plan = NonNullable<Awaited<ReturnType<typeof plan>>>

  /**
   * One transaction: leases renewed, what ended written down, then events fanned out, endpoints leased
   * and the lanes' queues refilled; idle lanes let go.
   */
  function write(work: Plan) {
    const { ended, wants, idle } = work
    return handle.write(async (trx) => {
      const now = await databaseNow(handle, trx, clock)
      // Endpoint rows before their attempts, the order a disabling PATCH or a DELETE takes them in.
      const held = work.renew ? await leases.renew(trx, owner, now, LEASE_MS) : lanes.ids()
      const touched = [
        ...wants.map((want) => want.endpointId),
        ...ended.map((end) => end.claimed.endpoint.id),
        ...work.hungUp.map((claimed) => claimed.endpoint.id),
      ]
      await leases.lockRows(trx, [...new Set(touched)])
      const settled = await settler.settleAll(trx, ended, owner, now)
      // Hung up on: pending again, for whichever instance holds the endpoint (this one, if it still does).
      await claims.release(
        trx,
        work.hungUp.map((claimed) => claimed.id),
        owner,
      )
      if (work.fan) await fanOut.fanOut(trx, now)
      const limit = Math.min(MAX_LANES - lanes.size, ENDPOINTS_PER_STEP)
      const acquired = work.acquire ? await leases.acquire(trx, { owner, now, leaseMs: LEASE_MS, limit }) : []
      const fresh = acquired.map((endpoint) => ({ endpointId: endpoint.id, count: wantFor(0) }))
      const stillHeld = new Set(held)
      const kept = wants.filter((want) => stillHeld.has(want.endpointId))
      const taken = await withoutEndedAccounts(
        trx,
        await claims.take(trx, { owner, wants: [...kept, ...fresh], now }),
        now,
      )
      const withWork = new Set(taken.map((claimed) => claimed.endpoint.id))
      const letGo = idle.filter((id) => stillHeld.has(id) && !withWork.has(id))
      await leases.release(trx, owner, letGo)
      return { held, settled, acquired, taken, letGo }
    })
  }

  /** One step: its plan, its transaction, then the lanes as it left them. True when it did anything. */
  async function step(claim: boolean): Promise<boolean> {
    leftForNext = false
    const work = await plan(claim)
    if (!work) return false
    // Not written (a deadline, a lost connection): what ended is written by the next step instead, so
    // no attempt stays held by this dispatcher with nothing to end it.
    const result = await write(work).catch((error: unknown) => {
      lanes.giveBackEnded(work.ended)
      lanes.putBackHungUp(work.hungUp)
      throw error
    })
    if (work.renew || work.acquire) renewedAt = work.startedAt
    for (const outcome of result.settled) deps.observe?.settled(outcome)
    const held = new Set(result.held)
    lanes.remove([...result.letGo, ...lanes.ids().filter((id) => !held.has(id))])
    lanes.add(result.acquired, work.startedAt)
    lanes.enqueue(result.taken)
    leftForNext = work.more || result.acquired.length === ENDPOINTS_PER_STEP
    // A fan-out tried counts even when it finished no event (one with over 2,000 takers takes steps).
    return work.ended.length > 0 || work.fan || result.taken.length > 0 || result.acquired.length > 0
  }

  return {
    start() {
      fence = setInterval(hangUpIfUnsure, FENCE_CHECK_MS).unref()
      wake(0)
    },
    whenIdle(): Promise<void> {
      if (stopping) return Promise.reject(new Error('the webhook dispatcher is stopping'))
      const idle = idleWaiters.wait(stepsBegun)
      wake(0)
      return idle
    },
    inFlightByAccount: () => lanes.inFlightByAccount(),
    async stop(deadlineMs: number): Promise<void> {
      stopping = true
      clearTimeout(timer)
      clearInterval(fence)
      idleWaiters.tell(Number.POSITIVE_INFINITY, new Error('the webhook dispatcher is stopping'))
      await stepping
      let deadline: NodeJS.Timeout | undefined
      const late = new Promise<void>((resolve) => {
        deadline = setTimeout(resolve, deadlineMs)
      })
      await Promise.race([Promise.all(lanes.running().map((entry) => entry.done)), late])
      clearTimeout(deadline)
      const unfinished = lanes.running()
      lanes.abortAll()
      await Promise.all(unfinished.map((entry) => entry.done))
      const release = async () => {
        await step(false)
        const ids = lanes.ids()
        const queued = lanes.remove(ids)
        const back = [...queued, ...unfinished.map((entry) => entry.claimed)].map((claimed) => claimed.id)
        await handle.write(async (trx) => {
          await leases.release(trx, owner, ids)
          await claims.release(trx, back, owner)
        })
      }
      await release().catch((error: unknown) =>
        logger.warn({ err: error }, 'could not give back webhook attempts'),
      )
      agents.destroy()
    },
  }
}
