import { SpanKind, SpanStatusCode } from '@opentelemetry/api'
import { type ExportResult, ExportResultCode } from '@opentelemetry/core'
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base'
import { afterEach, beforeEach, expect, it, vi } from 'vitest'
import { droppedSpans } from './dropped-spans.js'
import { guardedExporter } from './export-guard.js'

/** An exporter that keeps each batch and its callback, to answer (or not) when the test says. */
function heldExporter() {
  const calls: { spans: ReadableSpan[]; done: (result: ExportResult) => void }[] = []
  const exporter: SpanExporter = {
    export: (spans, done) => {
      calls.push({ spans, done })
    },
    shutdown: async () => {},
  }
  return { exporter, calls }
}

/** Ended spans as the exporter gets them, with only the fields the guard reads. */
function endedSpans(count: number, name = 'span'): ReadableSpan[] {
  return Array.from(
    { length: count },
    (_, index) =>
      ({
        name: `${name} ${index}`,
        kind: SpanKind.INTERNAL,
        status: { code: SpanStatusCode.UNSET },
        attributes: {},
        events: [],
      }) as unknown as ReadableSpan,
  )
}

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

it('a batch the exporter has not answered within the timeout is failed and counted, and its late answer ignored', () => {
  const { exporter, calls } = heldExporter()
  const results: ExportResult[] = []
  const before = droppedSpans.export_failed
  guardedExporter(exporter, 1_000).export(endedSpans(3), (result) => results.push(result))
  vi.advanceTimersByTime(999)
  expect(results).toEqual([])
  vi.advanceTimersByTime(1)
  expect(results.map((result) => result.code)).toEqual([ExportResultCode.FAILED])
  expect(droppedSpans.export_failed - before).toBe(3)

  calls[0]?.done({ code: ExportResultCode.FAILED })
  calls[0]?.done({ code: ExportResultCode.SUCCESS })
  expect(results).toHaveLength(1)
  expect(droppedSpans.export_failed - before).toBe(3)
})

it('a batch answered in time is passed on once, counted only if it failed', () => {
  const { exporter, calls } = heldExporter()
  const results: ExportResult[] = []
  const before = droppedSpans.export_failed
  const guarded = guardedExporter(exporter, 1_000)
  guarded.export(endedSpans(2), (result) => results.push(result))
  guarded.export(endedSpans(4), (result) => results.push(result))
  vi.advanceTimersByTime(0)
  calls[0]?.done({ code: ExportResultCode.SUCCESS })
  calls[1]?.done({ code: ExportResultCode.FAILED })
  vi.advanceTimersByTime(5_000)
  expect(results.map((result) => result.code)).toEqual([ExportResultCode.SUCCESS, ExportResultCode.FAILED])
  expect(droppedSpans.export_failed - before).toBe(4)
})

it("guards and exports a batch on a later turn than the call: the batch processor calls it from a request's span.end()", () => {
  const { exporter, calls } = heldExporter()
  const results: ExportResult[] = []
  const spans = endedSpans(2, 'GET /v1/ps_live_0123456789abcdef')
  guardedExporter(exporter, 1_000).export(spans, (result) => results.push(result))
  expect(calls).toHaveLength(0)
  expect(spans[0]?.name).toBe('GET /v1/ps_live_0123456789abcdef 0')

  vi.advanceTimersByTime(0)
  expect(calls).toHaveLength(1)
  expect(calls[0]?.spans.map((span) => span.name)).toEqual(['GET /v1/[redacted] 0', 'GET /v1/[redacted] 1'])
  calls[0]?.done({ code: ExportResultCode.SUCCESS })
  expect(results).toEqual([{ code: ExportResultCode.SUCCESS }])
})
