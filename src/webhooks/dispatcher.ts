import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import { databaseNow } from '../db/database-clock.js'
import type { DbHandle } from '../db/handle.js'
import type { AddressRules } from './address.js'
import { makeAttempt, RECHECK_AFTER_LOOKUP_MS } from './attempt.js'
import type { ClaimedAttempt } from './attempts.repository.js'
import { createClaimsRepository } from './claims.repository.js'
import type { Dispatcher, DispatcherObserver } from './dispatcher.port.js'
import { createIdleWaiters } from './idle-waiters.js'
import { createLanes } from './lanes.js'
import { createLeasesRepository } from './leases.repository.js'
import { ownerIdOf } from './owner.js'
import { lateReadWarner } from './ownership-windows.js'
import { createAgentPool } from './send.js'
import { createStep, type StepResult } from './step.js'

/** How often an idle dispatcher looks for work. */
export const POLL_MS = 200
/**
 * While busy, one step at most this often: each step is one transaction (one commit, one fsync on
 * SQLite) that writes down every attempt that ended since the last, fans out and fills the lanes'
 * queues. Attempts themselves start as soon as their lane has a free place, between steps.
 */
export const BUSY_MS = 50
/** Requests one instance has in flight over all of its lanes. */
export const MAX_IN_FLIGHT = 1_024
/** How often the dispatcher checks that its leases are surely still its own (RENEW_MS, step.ts). */
const FENCE_CHECK_MS = 250

export interface DispatcherDeps {
  handle: DbHandle
  logger: Logger
  rules: AddressRules
  timeoutMs: number
  retryScale: number
  /**
   * Due times and leases are read from its wall clock (on SQLite it is the database's clock; on
   * PostgreSQL the database's own is), the lease fence, lanes' idle and held times from its monotonic
   * one: the tests' fake clock decides when a retry is due and when a lease is renewed. Steps are timed
   * by real timers.
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
  const claims = createClaimsRepository(handle)
  const leases = createLeasesRepository(handle)
  const agents = createAgentPool({ timeoutMs: deps.timeoutMs })
  let timer: NodeJS.Timeout | undefined
  let fence: NodeJS.Timeout | undefined
  let timerDue = Number.POSITIVE_INFINITY
  let stepping: Promise<StepResult> | undefined
  /** SIGTERM: nothing new is claimed nor started; steps still renew the leases and write down what ends. */
  let stopping = false
  /** The drain is over: no step runs any more, and what is still in flight is aborted. */
  let halted = false
  /** Steps begun so far, and who waits for an idle step begun after a given one (`whenIdle`). */
  let stepsBegun = 0
  const idleWaiters = createIdleWaiters()
  const lanes = createLanes({
    maxInFlight: MAX_IN_FLIGHT,
    run: (claimed, target, signal, targetIfStillOwn) =>
      makeAttempt(claimed, target, {
        rules: deps.rules,
        timeoutMs: deps.timeoutMs,
        signal,
        targetIfStillOwn,
        recheckAfterMs: handle.dialect === 'sqlite' ? 0 : RECHECK_AFTER_LOOKUP_MS,
        agents,
        now: () => clock.now(),
      }),
    targetIfOwn: (claimed, queued) => {
      const target = claims.targetIfOwn(claimed, owner, queued)
      return target instanceof Promise ? target.catch(warnIfLate) : target
    },
    now: () => clock.monotonic(),
    mayStart: () => !stopping && steps.surelyHeld(),
    started: (claimed: ClaimedAttempt) => {
      if (claimed.attempt === 1 && !claimed.redelivery) {
        deps.observe?.lag(Math.max(0, clock.now() - claimed.event.created_at) / 1000)
      }
    },
    ended: () => wake(BUSY_MS),
  })

  const steps = createStep({ ...deps, owner, lanes, claims, leases })

  /** Ownership reads that answered past their window are logged, at most every LATE_READ_WARN_MS. */
  const warnIfLate = lateReadWarner(logger)

  /**
   * Not renewed in time (a database that does not answer, a freeze): the requests in flight are hung up
   * on before another instance may take their endpoints over, so it never sends beside them.
   */
  function hangUpIfUnsure(): void {
    if (halted || steps.surelyHeld()) return
    const requests = lanes.hangUp()
    if (requests > 0)
      logger.warn({ requests }, 'webhook leases not renewed in time: requests in flight hung up on')
  }

  /** Runs a step soon (within `delayMs`), never two at once. */
  function wake(delayMs: number): void {
    if (halted || performance.now() + delayMs >= timerDue) return
    clearTimeout(timer)
    timerDue = performance.now() + delayMs
    timer = setTimeout(() => {
      timerDue = Number.POSITIVE_INFINITY
      void run()
    }, delayMs)
  }

  async function run(): Promise<void> {
    if (stepping) return wake(BUSY_MS)
    const begun = ++stepsBegun
    let failed = false
    stepping = steps.step(!stopping).catch((error: unknown) => {
      logger.warn({ err: error }, 'webhook dispatch failed; trying again shortly')
      idleWaiters.tell(begun, new Error('a webhook dispatch step failed', { cause: error }))
      failed = true
      return { busy: false, more: false }
    })
    const { busy, more } = await stepping
    stepping = undefined
    if (!busy && !failed && !lanes.hasWork()) idleWaiters.tell(begun)
    // A step that left endpoints to lease or lanes to refill for the next is followed at once.
    wake(busy && more ? 0 : busy ? BUSY_MS : POLL_MS)
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
      // While the requests in flight drain, steps go on renewing the leases (and the fence hangs up if they
      // cannot): another instance never takes an endpoint over, and its attempts in flight, beside them.
      stopping = true
      idleWaiters.tell(Number.POSITIVE_INFINITY, new Error('the webhook dispatcher is stopping'))
      let deadline: NodeJS.Timeout | undefined
      const late = new Promise<void>((resolve) => {
        deadline = setTimeout(resolve, deadlineMs)
      })
      await Promise.race([Promise.all(lanes.running().map((entry) => entry.done)), late])
      clearTimeout(deadline)
      halted = true
      clearTimeout(timer)
      clearInterval(fence)
      await stepping
      const unfinished = lanes.running()
      lanes.abortAll()
      await Promise.all(unfinished.map((entry) => entry.done))
      const release = async () => {
        // What ended is written down, SETTLED_PER_STEP a step: an outcome left unwritten would stay held.
        do await steps.step(false)
        while (lanes.endedCount > 0)
        const ids = lanes.ids()
        const queued = lanes.remove(ids)
        const back = [...queued, ...unfinished.map((entry) => entry.claimed)].map((claimed) => claimed.id)
        await handle.write(async (trx) => {
          await leases.release(trx, owner, ids, await databaseNow(handle, trx, clock))
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
