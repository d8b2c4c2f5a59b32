/**
 * The webhook dispatcher's thread (started by dispatcher-thread.ts): the same dispatcher as in-process,
 * over a database connection of its own (SQLite: two more connections to the file, as another
 * instance's; PostgreSQL: a pool of its own) and, with tracing on, an SDK of its own. What the metrics
 * need goes to the main thread in a report every REPORT_MS (none while it has nothing to tell).
 */
import { getPriority, setPriority } from 'node:os'
import { parentPort, threadId, workerData } from 'node:worker_threads'
import { systemClock } from '../clock.js'
import type { Config } from '../config.js'
import { connectDatabase } from '../db/connect.js'
import { createLogger } from '../logger.js'
import { droppedSpans, noDroppedSpans } from '../tracing/dropped-spans.js'
import { TRACES_FLUSH_FLOOR_MS } from '../tracing/tracing.js'
import { addressRulesOf } from './address.js'
import { createDispatcher } from './dispatcher.js'
import {
  DISPATCHER_POOL_SIZE,
  type FromMain,
  REPORT_MS,
  type Report,
  type ToMain,
} from './dispatcher-thread.js'
import { createDnsResolve } from './resolve.js'

const port = parentPort
if (!port) throw new Error('dispatcher-worker.ts runs as a worker thread (dispatcher-thread.ts)')
const post = (message: ToMain) => port.postMessage(message)
const { config } = workerData as { config: Config }

// Before the database opens: its statements are traced only if a tracer is there by then.
const tracing = config.tracing && (await import('../tracing/sdk.js')).startTracing(config.tracing)
const logger = createLogger(config.logLevel)
const nice = yieldToRequests()
tracing?.logTo(logger)
const handle = await connectDatabase(
  config.database.kind === 'postgres'
    ? { ...config.database, poolSize: Math.min(config.database.poolSize, DISPATCHER_POOL_SIZE) }
    : config.database,
)
/** What happened since the last report (spans dropped as a count since the last one). */
let report: Report = emptyReport()
const dispatcher = createDispatcher({
  handle,
  logger,
  rules: addressRulesOf(config, createDnsResolve()),
  clock: systemClock,
  ...config.webhooks,
  observe: {
    settled: (outcome) => report.settled.push(outcome),
    lag: (seconds) => report.lags.push(seconds),
  },
})

function emptyReport(): Report {
  return { settled: [], lags: [], inFlight: [], droppedSpans: noDroppedSpans() }
}

/** Whether the last report had requests in flight (an idle thread then sends nothing until it has news). */
let reportedInFlight = false

function sendReport(): void {
  const inFlight = [...dispatcher.inFlightByAccount()]
  const dropped = { ...droppedSpans }
  const spans = Object.values(dropped).reduce((sum, count) => sum + count, 0)
  const news = report.settled.length + report.lags.length + spans
  if (news === 0 && inFlight.length === 0 && !reportedInFlight) return
  reportedInFlight = inFlight.length > 0
  Object.assign(droppedSpans, noDroppedSpans())
  post({ kind: 'report', report: { ...report, inFlight, droppedSpans: dropped } })
  report = emptyReport()
}
const reporting = setInterval(sendReport, REPORT_MS)

port.on('message', (message: FromMain) => {
  if (message.kind === 'whenIdle') {
    dispatcher.whenIdle().then(
      () => post({ kind: 'idle', id: message.id }),
      (error: Error) => post({ kind: 'idle', id: message.id, error: error.message }),
    )
    return
  }
  void stop(message.deadlineMs)
})

/** Stops the dispatcher, reports a last time, closes the database and the SDK, then ends the thread. */
async function stop(deadlineMs: number): Promise<void> {
  const budgetEnds = Date.now() + deadlineMs
  await dispatcher.stop(deadlineMs)
  clearInterval(reporting)
  sendReport()
  await handle.close().catch((error: unknown) => logger.warn({ err: error }, 'closing the database failed'))
  // What is left of the budget, or a moment: the main thread waits for this one before its own flush.
  await tracing?.shutdown(Math.max(budgetEnds - Date.now(), TRACES_FLUSH_FLOOR_MS))
  // In a worker, this ends the thread (its logger writes what it holds on 'exit'), not the process.
  process.exit(0)
}

dispatcher.start()
logger.info({ thread: threadId, nice }, 'webhook dispatcher running on a thread of its own')

/**
 * Lowers this thread's priority PETSTORE_WEBHOOK_THREAD_NICE levels below the process's (Linux, where
 * each thread has a nice value of its own and raising it needs no privilege; elsewhere a priority is the
 * whole process's, and nothing is changed). Returns the thread's nice value.
 */
function yieldToRequests(): number {
  const own = getPriority()
  if (process.platform !== 'linux') return own
  try {
    setPriority(Math.min(19, own + config.webhooks.threadNice))
  } catch (error) {
    logger.warn({ err: error }, "could not lower the webhook dispatcher thread's priority")
  }
  return getPriority()
}
