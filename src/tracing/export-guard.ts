import { type Attributes, SpanKind, SpanStatusCode } from '@opentelemetry/api'
import { type ExportResult, ExportResultCode } from '@opentelemetry/core'
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base'
import { redactKeysInTarget } from '../redact-keys.js'
import { droppedSpans } from './tracing.js'

/**
 * The exporter, with what leaves the process checked first (on the batch's timer, never on a request's
 * time), and the spans of every batch it failed to deliver (after its own retries) counted:
 * - anything shaped like an API key, in any string a span carries (its name, its status message, its
 *   attributes and its events'), is redacted, percent-encoded or not, as the access log does: a key sent
 *   in the wrong place (the path, a body's field name) reaches `url.path` or an error's message otherwise;
 * - a SERVER span that answered below 500 is not an error (the HTTP semantic conventions): @fastify/otel
 *   marks every request whose handling met an error (a 404, a 429, a refused body) ERROR, with the error's
 *   message, which may repeat what the client sent.
 */
export function guardedExporter(exporter: SpanExporter): SpanExporter {
  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void) {
      for (const span of spans) guard(span as Writable)
      exporter.export(spans, (result) => {
        if (result.code !== ExportResultCode.SUCCESS) droppedSpans.export_failed += spans.length
        done(result)
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
  span.name = redactKeysInTarget(span.name)
  const answered = span.attributes['http.response.status_code']
  if (span.kind === SpanKind.SERVER && typeof answered === 'number' && answered < 500) {
    span.status = { code: SpanStatusCode.UNSET }
  } else if (span.status.message !== undefined) {
    span.status = { ...span.status, message: redactKeysInTarget(span.status.message) }
  }
  redactIn(span.attributes)
  for (const event of span.events) if (event.attributes) redactIn(event.attributes)
}

function redactIn(attributes: Attributes): void {
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === 'string') attributes[name] = redactKeysInTarget(value)
    else if (Array.isArray(value) && value.some((item) => typeof item === 'string'))
      attributes[name] = value.map((item) => (typeof item === 'string' ? redactKeysInTarget(item) : item)) as
        | string[]
        | (string | null | undefined)[]
  }
}
