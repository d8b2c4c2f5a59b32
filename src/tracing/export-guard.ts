import { type Attributes, SpanKind, SpanStatusCode } from '@opentelemetry/api'
import { type ExportResult, ExportResultCode, getNumberFromEnv } from '@opentelemetry/core'
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base'
import { redactSecretsInTarget } from '../redact-secrets.js'
import { droppedSpans } from './dropped-spans.js'

/** The batch processor's export timeout when OTEL_BSP_EXPORT_TIMEOUT is unset, or not above 0. */
const SDK_EXPORT_TIMEOUT_MS = 30_000

/**
 * OTEL_BSP_EXPORT_TIMEOUT as `sdk-node` reads it for its batch processor: the SDK's own reader (a number,
 * else unset), and a value not above 0 is the default.
 */
export function batchExportTimeoutMs(): number {
  const given = getNumberFromEnv('OTEL_BSP_EXPORT_TIMEOUT')
  return given !== undefined && given > 0 ? given : SDK_EXPORT_TIMEOUT_MS
}

/**
 * The exporter, with what leaves the process checked first (on a turn of its own, never on a request's
 * time), and the spans of every batch it failed to deliver counted:
 * - anything shaped like an API key or a webhook secret (`whsec_…`), in any string a span carries (its
 *   name, its status message, its attributes and its events'), is redacted, percent-encoded or not, as the
 *   access log does: a secret sent in the wrong place (the path, a body's field name) reaches `url.path`
 *   or an error's message otherwise;
 * - a SERVER span that answered below 500 is not an error (the HTTP semantic conventions): @fastify/otel
 *   marks every request whose handling met an error (a 404, a 429, a refused body) ERROR, with the error's
 *   message, which may repeat what the client sent.
 *
 * The batch processor calls `export` on the stack of whatever ended the span that filled a batch (a
 * request's `span.end()` once 512 spans are queued): the guard and the exporter's encoding (several
 * milliseconds for 512 spans, far more the first time) wait for the next turn of the event loop. The exporter
 * may then run outside the batch processor's context (its suppression of tracing, which only an HTTP
 * instrumentation would read: the service has none), as its asynchronous work did already
 * (context-scope.ts).
 *
 * A batch is failed, and counted, when the exporter has not called back within `timeoutMs` (the
 * batch processor's own export timeout, after which it gives up on it): a collector that trickles its
 * answer never trips the transport's idle timer, and its batches would otherwise be lost uncounted. An
 * answer after that is ignored.
 */
export function guardedExporter(exporter: SpanExporter, timeoutMs: number): SpanExporter {
  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void) {
      let settled = false
      const settle = (result: ExportResult) => {
        if (settled) return
        settled = true
        clearTimeout(deadline)
        if (result.code !== ExportResultCode.SUCCESS) droppedSpans.export_failed += spans.length
        done(result)
      }
      const deadline = setTimeout(() => {
        settle({ code: ExportResultCode.FAILED, error: new Error(`export not answered in ${timeoutMs} ms`) })
      }, timeoutMs).unref()
      setImmediate(() => {
        if (settled) return
        for (const span of spans) guard(span as Writable)
        exporter.export(spans, settle)
      })
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  }
}

/** An ended span as the SDK keeps it: its fields are plain, written here before the exporter reads them. */
type Writable = { -readonly [K in 'name' | 'status']: ReadableSpan[K] } & Omit<
  ReadableSpan,
  'name' | 'status'
>

function guard(span: Writable): void {
  span.name = redactSecretsInTarget(span.name)
  const answered = span.attributes['http.response.status_code']
  if (span.kind === SpanKind.SERVER && typeof answered === 'number' && answered < 500) {
    span.status = { code: SpanStatusCode.UNSET }
  } else if (span.status.message !== undefined) {
    span.status = { ...span.status, message: redactSecretsInTarget(span.status.message) }
  }
  redactIn(span.attributes)
  for (const event of span.events) if (event.attributes) redactIn(event.attributes)
}

function redactIn(attributes: Attributes): void {
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === 'string') attributes[name] = redactSecretsInTarget(value)
    else if (Array.isArray(value) && value.some((item) => typeof item === 'string'))
      attributes[name] = value.map((item) =>
        typeof item === 'string' ? redactSecretsInTarget(item) : item,
      ) as string[] | (string | null | undefined)[]
  }
}
