import { setTimeout } from 'node:timers/promises'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import { type DiagLogger, DiagLogLevel, diag, type Span, trace } from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { NodeSDK } from '@opentelemetry/sdk-node'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { TracingConfig } from '../config.js'
import { redactKeysInTarget } from '../redact-keys.js'
import { VERSION } from '../version.js'
import { createContextScope } from './context-scope.js'
import { batchExportTimeoutMs, guardedExporter } from './export-guard.js'
import { followingLinks, RequestSampling, samplerOf } from './request-sampling.js'
import { droppedSpans, useTracer } from './tracing.js'

/** What a started SDK gives the server: the request spans' plugin, a place for its warnings, the flush. */
export interface StartedTracing {
  /**
   * Called first on the app: the sampling decision's hook, then @fastify/otel's plugin, which makes each
   * traced request's SERVER span.
   */
  instrument(app: FastifyInstance): Promise<void>
  /** Where the SDK's own warnings go (an export that failed, spans dropped): the service's logger. */
  logTo(logger: { warn(object: object, message: string): void }): void
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
  sdk.start()
  useTracer(trace.getTracer('petstore', VERSION), scope, new W3CTraceContextPropagator())
  const diagnostics: { logger?: { warn(object: object, message: string): void } } = {}
  diag.setLogger(countingQueueDrops(diagnostics), DiagLogLevel.WARN)
  return {
    instrument: async (app) => {
      sampling.register(app)
      await app.register(fastifyOtel.plugin())
    },
    logTo: (logger) => {
      diagnostics.logger = logger
    },
    shutdown: async (withinMs) => {
      const flushed = sdk.shutdown().then(
        () => true,
        () => true,
      )
      const late = setTimeout(withinMs, false, { ref: false })
      if (!(await Promise.race([flushed, late])))
        diagnostics.logger?.warn(
          { withinMs },
          'tracing: the spans still queued at shutdown were not exported in time',
        )
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
 * and anything spelling a key (sent in the path by mistake), percent-encoded or not.
 */
function nameByRoute(span: Span, request: FastifyRequest): void {
  if (!span.isRecording()) return
  const route = request.routeOptions.url
  span.updateName(route === undefined ? request.method : `${request.method} ${route}`)
  const query = request.url.indexOf('?')
  const path = redactKeysInTarget(query === -1 ? request.url : request.url.slice(0, query))
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

function countingQueueDrops(to: { logger?: { warn(object: object, message: string): void } }): DiagLogger {
  const warn = (message: string, ...args: unknown[]) => {
    const dropped = QUEUE_DROPS.exec(message)
    if (dropped) droppedSpans.queue_full += Number(dropped[1])
    to.logger?.warn({ tracing: args.map(String).join(' ') || undefined }, `tracing: ${message}`)
  }
  const ignore = () => {}
  return { error: warn, warn, info: ignore, debug: ignore, verbose: ignore }
}
