import {
  type Attributes,
  type Context,
  context,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api'

/**
 * The service's side of tracing: what every module calls to make a span. It needs only the OpenTelemetry
 * API; the SDK is loaded by sdk.ts, and only when tracing is on. Until sdk.ts hands it a tracer, every
 * helper here is the plain call it wraps (a test of `tracer` and nothing more), so tracing off costs
 * nothing measurable (docs/observability.md).
 */
let tracer: Tracer | undefined

/** Called once by sdk.ts when the SDK has started. */
export function useTracer(started: Tracer): void {
  tracer = started
}

export function tracingEnabled(): boolean {
  return tracer !== undefined
}

/** Spans whose export was given up, by why: counted here, exposed by /metrics (http/metrics.ts). */
export const droppedSpans = { export_failed: 0, queue_full: 0 }

/** `work` inside a child span of the active one; the span ends when `work` settles, ERROR if it threw. */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span | undefined) => Promise<T>,
  /** `root`: a trace of its own (the dispatcher's work), whatever span is active. */
  options: { kind?: SpanKind; links?: Link[]; root?: boolean } = {},
): Promise<T> {
  if (!tracer) return work(undefined)
  return tracer.startActiveSpan(name, { attributes, ...options }, async (span) => {
    try {
      return await work(span)
    } catch (error) {
      failed(span, error)
      throw error
    } finally {
      span.end()
    }
  })
}

/** The same for synchronous work (SQLite's reads). */
export function inSpanSync<T>(name: string, attributes: Attributes, work: () => T): T {
  if (!tracer) return work()
  const span = tracer.startSpan(name, { attributes })
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
 * Whether a span is active: the database's spans are made only inside one (a request's, the fan-out's),
 * so the dispatcher's polling, every 200 ms, is not a trace of its own each time.
 */
export function insideSpan(): boolean {
  return tracer !== undefined && trace.getSpan(context.active()) !== undefined
}

/** A span for work already done, timed by its caller: Kysely reports each query once it has ended. */
export function spanOfPast(name: string, durationMs: number, attributes: Attributes, error?: unknown): void {
  if (!tracer) return
  const end = Date.now()
  const span = tracer.startSpan(name, { attributes, startTime: end - durationMs })
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
  propagation.inject(context.active(), carrier)
  return carrier.traceparent ?? null
}

/** A link to the span a kept `traceparent` names (none for null or a malformed one). */
export function linksTo(traceParents: readonly (string | null | undefined)[]): Link[] {
  const links: Link[] = []
  for (const traceparent of traceParents) {
    if (!traceparent) continue
    const spanContext = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent }))
    if (spanContext) links.push({ context: spanContext })
  }
  return links
}

/** The trace and span ids of the span in `within`, for the access log; undefined when none. */
export function traceIdsOf(
  within: Context | null | undefined,
): { traceId: string; spanId: string } | undefined {
  const spanContext = within ? trace.getSpanContext(within) : undefined
  return spanContext && { traceId: spanContext.traceId, spanId: spanContext.spanId }
}

function failed(span: Span, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error)
  span.setStatus({ code: SpanStatusCode.ERROR, message })
  const code = (error as { code?: unknown } | null)?.code
  span.setAttribute('error.type', typeof code === 'string' ? code : ((error as Error)?.name ?? 'Error'))
}

export { SpanKind }
