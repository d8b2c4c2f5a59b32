import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import type { DbHandle } from '../db/handle.js'
import type { AddressRules } from './address.js'
import { type AttemptOutcome, makeAttempt } from './attempt.js'
import { type ClaimedAttempt, createAttemptsRepository } from './attempts.repository.js'
import { createFanOutRepository } from './fan-out.repository.js'
import { createSettler, type Settled } from './settle.js'

/** How often an idle dispatcher looks for work; busy, it goes on at once. */
const POLL_MS = 200
/** Attempts one instance makes at once (each endpoint has its own cap of 4 across instances). */
const MAX_IN_FLIGHT = 32
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
  /** Set once the attempt came back (written down or waiting to be). */
  ended?: boolean
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
  let finished: { running: Running; outcome: AttemptOutcome }[] = []
  let timer: NodeJS.Timeout | undefined
  let stopping = false
  let flushing = Promise.resolve()

  async function tick(): Promise<void> {
    timer = undefined
    let busy = false
    try {
      if (await fanOut.anyWaiting()) busy = (await handle.write((trx) => fanOut.fanOut(trx, clock.now()))) > 0
      busy = (await claimDue()) || busy
    } catch (error) {
      logger.warn({ err: error }, 'webhook dispatch failed; trying again shortly')
    }
    wake(busy ? 0 : POLL_MS)
  }

  function wake(delayMs: number): void {
    if (stopping) return
    if (timer && delayMs > 0) return
    clearTimeout(timer)
    timer = setTimeout(tick, delayMs)
  }

  /** Claims as many due attempts as there are free slots and starts them; true when it filled them all. */
  async function claimDue(): Promise<boolean> {
    const slots = MAX_IN_FLIGHT - running.size
    const now = clock.now()
    if (slots <= 0 || !(await attempts.anyDue(now))) return false
    const leaseToken = randomUUID()
    const leaseUntil = now + deps.timeoutMs + LEASE_MARGIN_MS
    const claimed = await handle.write((trx) => attempts.claim(trx, { now, slots, leaseToken, leaseUntil }))
    for (const item of claimed) start(item, leaseToken)
    return claimed.length === slots
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
    }
    entry.done = makeAttempt(claimed, options).then((outcome) => {
      entry.ended = true
      // Stopped before it ended: given back, to be made again by whichever instance comes first.
      if (abort.signal.aborted) return
      finished.push({ running: entry, outcome })
      if (finished.length === 1) setImmediate(() => void flush())
    })
    running.set(claimed.id, entry)
  }

  /** Writes down every attempt that ended since the last flush, in one transaction, one flush at a time. */
  function flush(): Promise<void> {
    flushing = flushing.then(writeFinished)
    return flushing
  }

  async function writeFinished(): Promise<void> {
    const batch = finished
    finished = []
    if (batch.length === 0) return
    try {
      const now = clock.now()
      const settled = await handle.write(async (trx) => {
        const results: Settled[] = []
        for (const { running: entry, outcome } of batch) {
          results.push(await settler.settle(trx, entry.claimed, outcome, entry.leaseToken, now))
        }
        return results
      })
      for (const outcome of settled) deps.observe?.settled(outcome)
    } catch (error) {
      // The leases run out and the attempts are made again: at least once, never lost.
      logger.warn({ err: error, attempts: batch.length }, 'could not record webhook attempts')
    } finally {
      for (const { running: entry } of batch) running.delete(entry.claimed.id)
      wake(0)
    }
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
      let deadline: NodeJS.Timeout | undefined
      const late = new Promise<void>((resolve) => {
        deadline = setTimeout(resolve, deadlineMs)
      })
      await Promise.race([Promise.all([...running.values()].map((entry) => entry.done)), late])
      clearTimeout(deadline)
      const unfinished = [...running.values()].filter((entry) => !entry.ended)
      for (const entry of unfinished) entry.abort.abort()
      await Promise.all(unfinished.map((entry) => entry.done))
      await flush()
      await flushing
      await handle
        .write(async (trx) => {
          for (const entry of unfinished) await attempts.release(trx, [entry.claimed.id], entry.leaseToken)
        })
        .catch((error: unknown) => logger.warn({ err: error }, 'could not give back webhook attempts'))
    },
  }
}
