import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import type { DbHandle } from '../db/handle.js'
import type { AddressRules } from './address.js'
import { type AttemptOutcome, makeAttempt } from './attempt.js'
import { type ClaimedAttempt, createAttemptsRepository } from './attempts.repository.js'
import { createFanOutRepository } from './fan-out.repository.js'
import { createAgentPool } from './send.js'
import { createSettler, type Settled } from './settle.js'

/** How often an idle dispatcher looks for work. */
const POLL_MS = 200
/**
 * While busy, one step every this often: each step is one transaction (one commit, one fsync on SQLite)
 * that writes down every attempt that ended since the last, fans out and claims; spacing them gathers
 * more work into each commit and leaves the database to the requests in between. It bounds what one
 * endpoint receives to 4 attempts per step (80 a second); at 20 ms, createPet kept 0.82 of its throughput
 * with three endpoints instead of 0.92 (bench/webhooks.ts).
 */
const BUSY_MS = 50
/** Attempts one instance makes at once (each endpoint has its own cap of 4 across instances). */
const MAX_IN_FLIGHT = 32
/**
 * Events wait in the outbox (one row each) while this many attempts are due: fanning out far ahead of
 * what can be sent would write three rows per event with three endpoints, in the requests' database, for
 * nothing yet. The queue is refilled as it drains.
 */
const FAN_OUT_AHEAD = 500
/** A lease outlives the attempt's own deadline by this much, so it never expires under a live attempt. */
const LEASE_MARGIN_MS = 10_000

export interface DispatcherDeps {
  handle: DbHandle
  clock: Clock
  logger: Logger
  rules: AddressRules
  timeoutMs: number
  retryScale: number
  /** Told of every attempt's end, and of the commit-to-first-attempt lag. */
  observe?: { settled(outcome: Settled): void; lag(seconds: number): void }
}

interface Running {
  claimed: ClaimedAttempt
  leaseToken: string
  abort: AbortController
  done: Promise<void>
  /** What came of it, once it came back; written down by the next step. */
  outcome?: AttemptOutcome
}

export type Dispatcher = ReturnType<typeof createDispatcher>

/**
 * The delivery loop of one instance (CONTRACT §14): fans committed events out to the endpoints that take
 * them, claims due attempts under a lease, makes them off the request path, and writes what came of them.
 * Any number of instances run one each over the same database; polling alone is correct.
 */
export function createDispatcher(deps: DispatcherDeps) {
  const { handle, clock, logger } = deps
  const fanOut = createFanOutRepository(handle)
  const attempts = createAttemptsRepository(handle)
  const settler = createSettler(handle, { retryScale: deps.retryScale })
  const running = new Map<number, Running>()
  const agents = createAgentPool()
  let timer: NodeJS.Timeout | undefined
  let timerDue = Number.POSITIVE_INFINITY
  let stepping: Promise<boolean> | undefined
  let stopping = false

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
    stepping = step({ claim: true }).catch((error: unknown) => {
      logger.warn({ err: error }, 'webhook dispatch failed; trying again shortly')
      return false
    })
    const busy = await stepping
    stepping = undefined
    wake(busy ? BUSY_MS : POLL_MS)
  }

  /**
   * One transaction: what ended is written down, then (unless stopping) events are fanned out and due
   * attempts claimed for the free slots. True when it did anything.
   */
  async function step(options: { claim: boolean }): Promise<boolean> {
    const ended = [...running.values()].filter((entry) => entry.outcome)
    const now = clock.now()
    const slots = MAX_IN_FLIGHT - running.size + ended.length
    const fan =
      options.claim && (await fanOut.anyWaiting()) && !(await attempts.dueMoreThan(now, FAN_OUT_AHEAD))
    const claim = options.claim && slots > 0 && (await attempts.anyDue(now))
    if (ended.length === 0 && !fan && !claim) return false
    const leaseToken = randomUUID()
    const leaseUntil = now + deps.timeoutMs + LEASE_MARGIN_MS
    const result = await handle
      .write(async (trx) => {
        await attempts.lockQueue(trx)
        const settled: Settled[] = []
        for (const entry of ended) {
          settled.push(
            await settler.settle(trx, entry.claimed, entry.outcome as AttemptOutcome, entry.leaseToken, now),
          )
        }
        const fanned = fan ? await fanOut.fanOut(trx, now) : 0
        const claimed = claim ? await attempts.claim(trx, { now, slots, leaseToken, leaseUntil }) : []
        return { settled, fanned, claimed }
      })
      // Not written: the leases run out and the attempts are made again (at least once, never lost).
      .finally(() => {
        for (const entry of ended) running.delete(entry.claimed.id)
      })
    for (const outcome of result.settled) deps.observe?.settled(outcome)
    // SIGTERM came while this step claimed: nothing new starts; what it took is given back at once.
    if (stopping && result.claimed.length > 0) {
      const ids = result.claimed.map((claimed) => claimed.id)
      await handle.write((trx) => attempts.release(trx, ids, leaseToken))
    } else {
      for (const claimed of result.claimed) start(claimed, leaseToken)
    }
    return ended.length > 0 || result.fanned > 0 || result.claimed.length > 0
  }

  function start(claimed: ClaimedAttempt, leaseToken: string): void {
    const abort = new AbortController()
    const entry = { claimed, leaseToken, abort } as Running
    if (claimed.attempt === 1 && !claimed.redelivery) {
      deps.observe?.lag(Math.max(0, clock.now() - claimed.event.created_at) / 1000)
    }
    const options = {
      rules: deps.rules,
      timeoutMs: deps.timeoutMs,
      signal: abort.signal,
      now: () => clock.now(),
      agents,
    }
    entry.done = makeAttempt(claimed, options).then((outcome) => {
      // Stopped before it ended: given back (stop()), to be made again by whichever instance comes first.
      if (abort.signal.aborted) return
      entry.outcome = outcome
      wake(BUSY_MS)
    })
    running.set(claimed.id, entry)
  }

  return {
    start: () => wake(0),
    /**
     * No new attempts; those in flight may finish until `deadlineMs`, then are aborted and given back
     * (pending again, free to be claimed). Resolves once everything is written down.
     */
    async stop(deadlineMs: number): Promise<void> {
      stopping = true
      clearTimeout(timer)
      // A step under way finishes first (what it claims is given back, never started).
      await stepping
      let deadline: NodeJS.Timeout | undefined
      const late = new Promise<void>((resolve) => {
        deadline = setTimeout(resolve, deadlineMs)
      })
      await Promise.race([Promise.all([...running.values()].map((entry) => entry.done)), late])
      clearTimeout(deadline)
      const unfinished = [...running.values()].filter((entry) => !entry.outcome)
      for (const entry of unfinished) entry.abort.abort()
      await Promise.all(unfinished.map((entry) => entry.done))
      const release = async () => {
        await step({ claim: false })
        await handle.write(async (trx) => {
          for (const entry of unfinished) await attempts.release(trx, [entry.claimed.id], entry.leaseToken)
        })
      }
      await release().catch((error: unknown) =>
        logger.warn({ err: error }, 'could not give back webhook attempts'),
      )
      agents.destroy()
    },
  }
}
