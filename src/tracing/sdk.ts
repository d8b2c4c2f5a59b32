import { setTimeout } from 'node:timers/promises'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import { type DiagLogger, DiagLogLevel, diag, type Span, trace } from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { NodeSDK } from '@opentelemetry/sdk-node'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { TracingConfig } from '../config.js'
import { redactSecretsInTarget } from '../redact-secrets.js'
import { VERSION } from '../version.js'
import { createContextScope } from './context-scope.js'
import { droppedSpans } from './dropped-spans.js'
import { batchExportTimeoutMs, guardedExporter } from './export-guard.js'
import { followingLinks, RequestSampling, samplerOf } from './request-sampling.js'
import { useTracer } from './tracing.js'

/** The service's logger, as far as the SDK's warnings need it. */
type WarningLog = { warn(object: object, message: string): void }

/** What a started SDK gives the server: the request spans' plugin, a place for its warnings, the flush. */
export interface StartedTracing {
  /**
   * Called first on the app: the sampling decision's hook, then @fastify/otel's plugin, which makes each
   * traced request's SERVER span.
   */
  instrument(app: FastifyInstance): Promise<void>
  /**
   * Where the SDK's own warnings go (an export that failed, spans dropped, a variable it replaced by its
   * default): the service's logger. Those given before it, while the SDK was built, are written then.
   */
  logTo(logger: WarningLog): void
  /**
   * Exports what is still queued, for at most `withinMs` (what is left of the drain budget): a collector
   * that does not answer by then loses those spans (logged), not the process's exit.
   */
  shutdown(withinMs: number): Promise<void>
}

/**
 * Starts the OpenTelemetry SDK (the 2.x line with `sdk-node` 0.222, which runs on Node 20 to 26: see
 * README.md). The standard variables configure it (sampler, resource attributes, batch delay, endpoint,
 * headers); the exporter is OTLP over HTTP, protobuf or JSON by `config.protocol`
 * (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL: config.ts). Exports run
 * in the background on batches: a collector that is down or slow costs dropped spans, counted in
 * `petstore_trace_spans_dropped_total`, never a request's time.
 */
export function startTracing(config: TracingConfig): StartedTracing {
  // First: the exporter and the SDK read their variables while they are built, and a value they replace by
  // a default (OTEL_EXPORTER_OTLP_TIMEOUT=abc, headers they cannot parse) is told only then.
  const log = heldUntilLogger()
  const diagLogger = countingDrops(log)
  diag.setLogger(diagLogger, DiagLogLevel.WARN)
  const sampler = samplerOf(config)
  const scope = createContextScope()
  const sampling = new RequestSampling(sampler, isProbe, scope)
  const fastifyOtel = new FastifyOtelInstrumentation({
    // One SERVER span per request and the handler's child: a span per hook would cost more than it tells.
    instrumentHooks: false,
    recordExceptions: false,
    // Requests sampled out, and the probes and /metrics (polled every few seconds: a span each would bury
    // the requests), get nothing from it.
    ignorePaths: ({ url }) => sampling.ignores(url),
    requestHook: nameByRoute,
    lifecycleHook: nameHandlerByOperation,
  })
  const exporter = config.protocol === 'http/json' ? new JsonExporter() : new ProtobufExporter()
  const sdk = new NodeSDK({
    ...(config.serviceName !== undefined && { serviceName: config.serviceName }),
    sampler: followingLinks(sampler),
    idGenerator: sampling.idGenerator,
    contextManager: scope.contextManager,
    traceExporter: guardedExporter(exporter, batchExportTimeoutMs()),
    instrumentations: [fastifyOtel],
    // Only traces: no metrics or logs pipelines (Prometheus serves metrics, pino the logs).
    metricReaders: [],
    logRecordProcessors: [],
  })
  // With OTEL_LOG_LEVEL set, NodeSDK's constructor puts a console logger of its own in this one's place.
  diag.setLogger(diagLogger, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true })
  sdk.start()
  useTracer(trace.getTracer('petstore', VERSION), scope, new W3CTraceContextPropagator())
  return {
    instrument: async (app) => {
      sampling.register(app)
      await app.register(fastifyOtel.plugin())
    },
    logTo: log.logTo,
    shutdown: async (withinMs) => {
      const flushed = sdk.shutdown().then(
        () => true,
        () => true,
      )
      const late = setTimeout(withinMs, false, { ref: false })
      if (!(await Promise.race([flushed, late])))
        log.warn({ withinMs }, 'tracing: the spans still queued at shutdown were not exported in time')
    },
  }
}

/** The probes and /metrics, whatever query follows. */
const isProbe = (url: string) => {
  const query = url.indexOf('?')
  const path = query === -1 ? url : url.slice(0, query)
  return path === '/metrics' || path === '/healthz' || path === '/readyz'
}

/**
 * The SERVER span's name is the route template (`GET /v1/pets/{petId}` style, as Fastify spells it:
 * `/v1/pets/:petId`), never the raw target; `url.path` loses its query string (a page token, a filter)
 * and anything spelling a key or a webhook secret (sent in the path by mistake), percent-encoded or not.
 */
function nameByRoute(span: Span, request: FastifyRequest): void {
  if (!span.isRecording()) return
  const route = request.routeOptions.url
  span.updateName(route === undefined ? request.method : `${request.method} ${route}`)
  const query = request.url.indexOf('?')
  const path = redactSecretsInTarget(query === -1 ? request.url : request.url.slice(0, query))
  if (path !== request.url) span.setAttribute('url.path', path)
}

/**
 * The handler's span is `handler listPets` (the route's operationId), a 404's `notFoundHandler`:
 * @fastify/otel would name an anonymous handler after the source text of the plugin that registered it.
 */
function nameHandlerByOperation(span: Span, info: { hookName: string; request: FastifyRequest }): void {
  if (!span.isRecording()) return
  const { routeOptions } = info.request
  const name = (routeOptions.schema as { operationId?: string } | undefined)?.operationId ?? routeOptions.url
  // A 404's handler has no route: its span is `notFoundHandler`, not the registering plugin's source.
  if (name === undefined) {
    span.updateName(info.hookName)
    return
  }
  span.updateName(`${info.hookName} ${name}`)
  span.setAttribute('hook.callback.name', name)
}

/** The batch processor says how many spans a full queue dropped only in this warning: it is counted. */
const QUEUE_DROPS = /^Dropped (\d+) spans because maxQueueSize reached/
/** The exporter tells a partial success (spans the collector rejected) only in this warning, with its JSON. */
const PARTIAL_SUCCESS = /^Received Partial Success response/

function countingDrops(log: WarningLog): DiagLogger {
  const warn = (message: string, ...args: unknown[]) => {
    const dropped = QUEUE_DROPS.exec(message)
    if (dropped) droppedSpans.queue_full += Number(dropped[1])
    if (PARTIAL_SUCCESS.test(message)) droppedSpans.rejected += rejectedSpansOf(args[0])
    log.warn({ tracing: args.map(String).join(' ') || undefined }, `tracing: ${message}`)
  }
  const ignore = () => {}
  return { error: warn, warn, info: ignore, debug: ignore, verbose: ignore }
}

/**
 * `rejectedSpans` of a partial success as the exporter writes it: a number (protobuf) or a decimal string
 * (OTLP/JSON's int64); 0 when it is not there (a partial success may only warn).
 */
function rejectedSpansOf(json: unknown): number {
  try {
    const count = Number((JSON.parse(String(json)) as { rejectedSpans?: unknown }).rejectedSpans ?? 0)
    return Number.isSafeInteger(count) && count > 0 ? count : 0
  } catch {
    return 0
  }
}

/**
 * Where the SDK's warnings go: the service's logger once `logTo` gives it; until then (the SDK is built
 * before the stores open, and the logger comes with them) they are held, and written when it comes.
 */
function heldUntilLogger(): WarningLog & { logTo(logger: WarningLog): void } {
  let logger: WarningLog | undefined
  const held: Parameters<WarningLog['warn']>[] = []
  return {
    warn: (object, message) => {
      if (logger) logger.warn(object, message)
      else held.push([object, message])
    },
    logTo: (to) => {
      logger = to
      for (const [object, message] of held.splice(0)) to.warn(object, message)
    },
  }
}
