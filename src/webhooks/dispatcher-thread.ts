import { Worker } from 'node:worker_threads'
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import { countDroppedSpans, type DroppedSpans } from '../tracing/dropped-spans.js'
import type { Dispatcher, DispatcherObserver } from './dispatcher.port.js'
import type { Settled } from './settle.js'

/** What the worker reports every few milliseconds (dispatcher-worker.ts). */
export interface Report {
  settled: Settled[]
  lags: number[]
  /** Requests in flight per account, now. */
  inFlight: [number, number][]
  /** Spans the worker's SDK dropped since the last report. */
  droppedSpans: DroppedSpans
}

export type ToMain = { kind: 'report'; report: Report } | { kind: 'idle'; id: number; error?: string }

export type FromMain = { kind: 'whenIdle'; id: number } | { kind: 'stop'; deadlineMs: number }

/**
 * Whether this module runs as built JavaScript: a worker is started from `dispatcher-worker.js` beside
 * it. From the TypeScript sources (tsx, vitest) the dispatcher runs on the main thread.
 */
export const THREAD_AVAILABLE = import.meta.url.endsWith('.js')

/**
 * PostgreSQL connections of the thread's pool, at most (beside the API's PETSTORE_DB_POOL_SIZE): one
 * step's transaction at a time, the reads before it and the ownership reads just before attempts start.
 */
export const DISPATCHER_POOL_SIZE = 4

/** A worker that fails is started again after this long. */
export const RESTART_MS = 1_000
/** How often the worker tells the main thread what ended, the lags and the requests in flight. */
export const REPORT_MS = 100
/** After its drain budget, a worker has this long to write down and close before it is terminated. */
const STOP_GRACE_MS = 5_000

/**
 * The webhook dispatcher on a thread of its own (production: server.ts). Its steps (SQLite transactions),
 * sends and answers never hold the event loop that serves requests: beside a fan-out to 1,000 endpoints,
 * listPets answers as it does without it (docs/performance.md). It tells the metrics what it did, a
 * report every 100 ms. A worker that fails is logged and started again; nothing it held is lost (its
 * attempts stay pending in the database, its endpoint leases lapse within LEASE_MS).
 */
export function startDispatcherThread(
  config: Config,
  options: { logger: Logger; observe: DispatcherObserver },
): Dispatcher {
  const { logger, observe } = options
  let worker: Worker | undefined
  let stopping = false
  let inFlight = new Map<number, number>()
  let nextId = 0
  const idleWaiters = new Map<number, { resolve(): void; reject(error: Error): void }>()
  let stopped: (() => void) | undefined

  function receive(message: ToMain): void {
    if (message.kind === 'report') {
      const { report } = message
      for (const outcome of report.settled) observe.settled(outcome)
      for (const seconds of report.lags) observe.lag(seconds)
      inFlight = new Map(report.inFlight)
      countDroppedSpans(report.droppedSpans)
    } else {
      const waiter = idleWaiters.get(message.id)
      idleWaiters.delete(message.id)
      if (message.error === undefined) waiter?.resolve()
      else waiter?.reject(new Error(message.error))
    }
  }

  function start(): void {
    if (stopping) return
    const started = new Worker(new URL('./dispatcher-worker.js', import.meta.url), { workerData: { config } })
    worker = started
    started.on('message', receive)
    started.on('error', (error) => logger.error({ err: error }, 'the webhook dispatcher thread failed'))
    started.on('exit', (code) => {
      if (worker === started) worker = undefined
      inFlight = new Map()
      for (const waiter of idleWaiters.values())
        waiter.reject(new Error('the webhook dispatcher thread exited'))
      idleWaiters.clear()
      stopped?.()
      if (stopping) return
      logger.error({ code }, 'the webhook dispatcher thread exited; starting it again')
      setTimeout(start, RESTART_MS).unref()
    })
  }

  return {
    start,
    whenIdle(): Promise<void> {
      const running = worker
      if (stopping || !running) return Promise.reject(new Error('the webhook dispatcher is not running'))
      const id = nextId++
      return new Promise((resolve, reject) => {
        idleWaiters.set(id, { resolve, reject })
        running.postMessage({ kind: 'whenIdle', id } satisfies FromMain)
      })
    },
    inFlightByAccount: () => inFlight,
    async stop(deadlineMs: number): Promise<void> {
      stopping = true
      const running = worker
      if (!running) return
      // The worker stops its dispatcher, writes down, closes its database and exits.
      const exited = new Promise<'exited'>((resolve) => {
        stopped = () => resolve('exited')
      })
      running.postMessage({ kind: 'stop', deadlineMs } satisfies FromMain)
      let grace: NodeJS.Timeout | undefined
      const late = new Promise<'late'>((resolve) => {
        grace = setTimeout(() => resolve('late'), deadlineMs + STOP_GRACE_MS)
      })
      const outcome = await Promise.race([exited, late])
      clearTimeout(grace)
      if (outcome === 'late') {
        logger.warn('the webhook dispatcher thread did not stop in time; terminated')
        await running.terminate()
      }
    },
  }
}
