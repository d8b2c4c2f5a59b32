import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import type { Config } from './config.js'
import { describeDatabase } from './db/describe.js'
import { sqliteOnNodeWarning } from './db/node-support.js'
import { markSqliteServer, otherServersWarning } from './db/sqlite-servers.js'
import { createDeps, type Deps, type DepsOptions } from './deps.js'
import { drain } from './http/drain.js'
import { registerMetricsRoute } from './http/metrics.js'
import { listenStartupError } from './startup-errors.js'
import { TRACES_FLUSH_FLOOR_MS } from './tracing/tracing.js'
import type { Dispatcher } from './webhooks/dispatcher.port.js'
import { startDispatcherThread, THREAD_AVAILABLE } from './webhooks/dispatcher-thread.js'
import { createQueueProbe } from './webhooks/queue-probe.js'

export interface RunningServer {
  app: FastifyInstance
  /** The stores and services it serves with (the demo seeds through them). */
  deps: Deps
  /** Its webhook dispatcher (tests wait on `whenIdle()` to know that it sends nothing more). */
  dispatcher: Dispatcher
  /** Drains (http/drain.ts: no new connections, requests in flight finish), then closes the stores. */
  close(): Promise<void>
}

export interface ServerOptions extends DepsOptions {
  /**
   * The webhook dispatcher on a thread of its own (webhooks/dispatcher-thread.ts), as `npm start` runs
   * it; from the TypeScript sources (tsx, vitest) it stays on the main thread. Tests that set the clock
   * or the resolver run it on the main thread, where those are.
   */
  dispatcherThread?: boolean
}

/** Opens the stores, builds the app and listens where the configuration says. */
export async function startServer(config: Config, options: ServerOptions = {}): Promise<RunningServer> {
  // Before the stores open: the database handle traces its statements only if a tracer is there by then.
  // Off, the SDK is never imported (tracing/README.md).
  const tracing = config.tracing && (await import('./tracing/sdk.js')).startTracing(config.tracing)
  const deps = await createDeps(config, options)
  tracing?.logTo(deps.logger)
  const app = await buildApp(deps, { tracing: tracing?.instrument })
  const dispatcher =
    options.dispatcherThread && THREAD_AVAILABLE
      ? startDispatcherThread(config, { logger: deps.logger, observe: deps.metrics.webhooks })
      : // Imported here only: with the thread, the main thread never loads the sender (undici).
        (await import('./webhooks/dispatcher.js')).createDispatcher({
          handle: deps.database,
          logger: deps.logger,
          rules: deps.addressRules,
          clock: deps.clock,
          ...config.webhooks,
          observe: deps.metrics.webhooks,
        })
  deps.metrics.webhooks.probe(createQueueProbe(deps.database, dispatcher))
  const servers: FastifyInstance[] = [app]
  let release = () => {}
  try {
    await app.listen({ port: config.port, host: config.host }).catch((error: unknown) => {
      throw listenStartupError(config.port, config.host, error)
    })
    release = announceStart(config, deps)
    dispatcher.start()
    if (config.metricsPort !== undefined) {
      const metricsApp = Fastify({ loggerInstance: deps.logger as FastifyBaseLogger })
      registerMetricsRoute(metricsApp, deps.metrics)
      servers.push(metricsApp)
      await metricsApp.listen({ port: config.metricsPort, host: config.host })
    }
  } catch (error) {
    await Promise.allSettled([dispatcher.stop(0), ...servers.map((server) => server.close())])
    await deps.close()
    await tracing?.shutdown(TRACES_FLUSH_FLOOR_MS)
    release()
    throw error
  }
  return {
    app,
    deps,
    dispatcher,
    close: async () => {
      const budgetEnds = Date.now() + config.drainSeconds * 1000
      // Requests and webhook attempts in flight share the drain budget; then the stores close.
      await Promise.all([
        drain(app, config.drainSeconds * 1000, deps.logger),
        dispatcher.stop(config.drainSeconds * 1000),
        ...servers.slice(1).map((server) => server.close()),
      ])
      await deps.close()
      // The spans of the drain itself included, in what is left of the budget (never less than a moment).
      await tracing?.shutdown(Math.max(budgetEnds - Date.now(), TRACES_FLUSH_FLOOR_MS))
      release()
    },
  }
}

/**
 * Logs which database this instance serves (once: the first thing to check when "my key is unknown")
 * and what start-up warns about; marks a SQLite file as served by this process until the returned
 * function is called.
 */
function announceStart(config: Config, deps: Deps): () => void {
  deps.logger.info({ database: describeDatabase(config.database) }, 'serving from this database')
  const sqlite = config.database.kind === 'sqlite' ? markSqliteServer(config.database.path) : undefined
  const warnings = [
    ...config.warnings,
    sqlite && sqliteOnNodeWarning(),
    sqlite && otherServersWarning(sqlite.others),
  ]
  for (const line of warnings) if (line) deps.logger.warn(line)
  return sqlite?.release ?? (() => {})
}

/**
 * Runs until SIGTERM or SIGINT, then drains and exits 0. A signal during start-up stops it once started.
 * `onStarted` runs once it listens (the demo's seeding); if it fails, the server stops and the error stands.
 */
export async function serveUntilSignalled(
  config: Config,
  onStarted?: (server: RunningServer) => Promise<void>,
): Promise<void> {
  const signalled = new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', resolve)
    process.once('SIGINT', resolve)
  })
  const server = await startServer(config, { dispatcherThread: true })
  try {
    await onStarted?.(server)
  } catch (error) {
    await server.close()
    throw error
  }
  const signal = await signalled
  server.app.log.info({ signal }, 'shutting down: finishing in-flight requests')
  await server.close()
}
