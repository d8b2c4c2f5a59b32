import {
  type Attributes,
  type Context,
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapPropagator,
  type Tracer,
  trace,
} from '@opentelemetry/api'
import type { ContextScope } from './context-scope.js'

/**
 * The service's side of tracing: what every module calls to make a span. It needs only the OpenTelemetry
 * API; the SDK is loaded by sdk.ts, and only when tracing is on. Until sdk.ts hands it a tracer, every
 * helper here is the plain call it wraps (a test of `tracer` and nothing more), so tracing off costs
 * nothing measurable (docs/observability.md).
 */
let tracer: Tracer | undefined
/** Held while a sampled root span's work runs (context-scope.ts); none in tests that bring their own SDK. */
let scope: Pick<ContextScope, 'hold' | 'release'> | undefined

/**
 * How a kept trace context is written and read back (an event's `trace_parent`): W3C Trace Context, whatever
 * OTEL_PROPAGATORS makes of requests' headers (with `b3` alone, the global propagator writes no
 * `traceparent`, and the webhooks would lose their links). The global one until sdk.ts gives it.
 */
let keptContext: TextMapPropagator = propagation

/** Called once by sdk.ts when the SDK has started. */
export function useTracer(
  started: Tracer,
  contextScope?: Pick<ContextScope, 'hold' | 'release'>,
  traceContext?: TextMapPropagator,
): void {
  tracer = started
  scope = contextScope
  if (traceContext) keptContext = traceContext
}

export function tracingEnabled(): boolean {
  return tracer !== undefined
}

/** The least time the spans still queued at shutdown get, even when the drain used the whole budget. */
export const TRACES_FLUSH_FLOOR_MS = 1_000

/**
 * The tracer to make a child span with, or undefined when none should be made: tracing off, or no span
 * active, or the active one not recording (its trace was not sampled). An unsampled request (99 of 100 at
 * 1% sampling) so pays one look at the active context per helper, not a span, a context switch and a
 * promise each (measured: the difference between 0.6 and 0.9 of the throughput).
 */
function childTracer(): Tracer | undefined {
  return tracer && trace.getSpan(context.active())?.isRecording() ? tracer : undefined
}

/**
 * `work` inside a child span of the active one, when that one records; the span ends when `work` settles,
 * ERROR if it threw. `root`: a trace of its own whatever is active (the dispatcher's work), when the
 * sampler keeps it: one it drops gets no span and enters no context (its work runs in the caller's, which
 * for the dispatcher's work has none), and one it keeps holds the context scope while `work` runs.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span | undefined) => Promise<T>,
  options: { kind?: SpanKind; links?: Link[]; root?: boolean } = {},
): Promise<T> {
  const maker = options.root ? tracer : childTracer()
  if (!maker) return work(undefined)
  const span = maker.startSpan(name, { attributes, ...options })
  if (!span.isRecording()) return work(undefined)
  if (options.root) scope?.hold()
  return context.with(trace.setSpan(context.active(), span), async () => {
    try {
      return await work(span)
    } catch (error) {
      failed(span, error)
      throw error
    } finally {
      span.end()
      if (options.root) scope?.release()
    }
  })
}

/** The same for synchronous work (SQLite's reads). */
export function inSpanSync<T>(name: string, attributes: Attributes, work: () => T): T {
  const maker = childTracer()
  if (!maker) return work()
  const span = maker.startSpan(name, { attributes })
  try {
    return work()
  } catch (error) {
    failed(span, error)
    throw error
  } finally {
    span.end()
  }
}

/**
 * `work`, which may answer synchronously or with a promise, inside a child span that stays synchronous
 * when `work` is (a cache hit on SQLite answers in the same turn, traced or not). `work` gets the span to
 * annotate; what it starts synchronously is under the span.
 */
export function inSpanMaybeAsync<T>(
  name: string,
  work: (span: Span | undefined) => T | Promise<T>,
): T | Promise<T> {
  const maker = childTracer()
  if (!maker) return work(undefined)
  const span = maker.startSpan(name)
  let result: T | Promise<T>
  try {
    result = context.with(trace.setSpan(context.active(), span), () => work(span))
  } catch (error) {
    failed(span, error)
    span.end()
    throw error
  }
  if (!(result instanceof Promise)) {
    span.end()
    return result
  }
  return result.then(
    (value) => {
      span.end()
      return value
    },
    (error: unknown) => {
      failed(span, error)
      span.end()
      throw error
    },
  )
}

/**
 * Whether a recording span is active: the database's spans are made only inside one (a request's, the
 * fan-out's), so the dispatcher's polling, every 200 ms, is not a trace of its own each time.
 */
export function insideSpan(): boolean {
  return childTracer() !== undefined
}

/** The active span when tracing is on and it records (a batch notes its callers'); else undefined. */
export function recordingSpan(): Span | undefined {
  return childTracer() ? trace.getSpan(context.active()) : undefined
}

/**
 * Work one caller runs for several (a group commit's transaction, one read for a turn's asks): its spans go
 * under the first of `spans` that records, not merely under the caller that scheduled it (which may have
 * been sampled out, and then they would be in no trace), and each other one that records gets a link to
 * that one, so every traced caller leads to the statements it waited for. Plain `work()` when none records.
 */
export function sharedBy<T>(spans: readonly (Span | undefined)[], work: () => T): T {
  if (!tracer) return work()
  const recording = spans.filter((span): span is Span => span?.isRecording() === true)
  const [lead, ...others] = recording
  if (!lead) return work()
  for (const other of others) other.addLink({ context: lead.spanContext() })
  return context.with(trace.setSpan(context.active(), lead), work)
}

/** A span for work already done, timed by its caller: Kysely reports each query once it has ended. */
export function spanOfPast(name: string, durationMs: number, attributes: Attributes, error?: unknown): void {
  const maker = childTracer()
  if (!maker) return
  const end = Date.now()
  const span = maker.startSpan(name, { attributes, startTime: end - durationMs })
  if (error !== undefined) failed(span, error)
  span.end(end)
}

/** Sets attributes on the active span (the request's, in a handler), when tracing is on. */
export function annotate(attributes: Attributes, within: Context = context.active()): void {
  if (tracer) trace.getSpan(within)?.setAttributes(attributes)
}

/**
 * The active span as a W3C `traceparent`, to keep beside what it caused (an event row) and link to later;
 * null when tracing is off or nothing is being traced.
 */
export function currentTraceParent(): string | null {
  if (!tracer) return null
  const carrier: { traceparent?: string } = {}
  keptContext.inject(context.active(), carrier, defaultTextMapSetter)
  return carrier.traceparent ?? null
}

/** A link to the span a kept `traceparent` names (none for null or a malformed one, none when off). */
export function linksTo(traceParents: readonly (string | null | undefined)[]): Link[] {
  const links: Link[] = []
  if (!tracer) return links
  for (const traceparent of traceParents) {
    if (!traceparent) continue
    const spanContext = trace.getSpanContext(
      keptContext.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter),
    )
    if (spanContext) links.push({ context: spanContext })
  }
  return links
}

/**
 * The trace and span ids of a request's span, for the access log; a request sampled out has no span, only
 * the trace id it was decided on (its caller's, or a new one: tracing/request-sampling.ts).
 */
export function traceIdsOf(
  within: Context | null | undefined,
  untracedTraceId: string | null,
): { traceId: string; spanId?: string } | undefined {
  const spanContext = within ? trace.getSpanContext(within) : undefined
  if (spanContext) return { traceId: spanContext.traceId, spanId: spanContext.spanId }
  return untracedTraceId === null ? undefined : { traceId: untracedTraceId }
}

function failed(span: Span, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error)
  span.setStatus({ code: SpanStatusCode.ERROR, message })
  const code = (error as { code?: unknown } | null)?.code
  span.setAttribute('error.type', typeof code === 'string' ? code : ((error as Error)?.name ?? 'Error'))
}

export { SpanKind }
