import { context, propagation, type Sampler, trace } from '@opentelemetry/api'
import { CompositePropagator, W3CTraceContextPropagator } from '@opentelemetry/core'
import { NodeSDK, tracing as sdkTracing } from '@opentelemetry/sdk-node'
import { SamplingDecision } from '@opentelemetry/sdk-trace-base'
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { currentTraceParent, inSpan, linksTo, useTracer } from './tracing.js'

const exporter = new sdkTracing.InMemorySpanExporter()
/** Keeps the spans whose `keep` attribute is true, and every child of a kept one. */
const byAttribute: Sampler = {
  shouldSample: (parent, _traceId, _name, _kind, attributes) =>
    attributes.keep === true || trace.getSpan(parent)?.isRecording()
      ? { decision: SamplingDecision.RECORD_AND_SAMPLED }
      : { decision: SamplingDecision.NOT_RECORD },
  toString: () => 'byAttribute',
}
const holds = { held: 0, calls: 0 }
const scope = {
  hold() {
    holds.held++
    holds.calls++
  },
  release() {
    holds.held--
  },
}
let sdk: NodeSDK

beforeAll(() => {
  sdk = new NodeSDK({
    spanProcessors: [new sdkTracing.SimpleSpanProcessor(exporter)],
    sampler: byAttribute,
    instrumentations: [],
  })
  sdk.start()
  useTracer(trace.getTracer('test'), scope)
})
afterAll(() => sdk.shutdown())

it('a sampled root span holds the context scope while its work runs, and its children stay under it', async () => {
  await inSpan(
    'root',
    { keep: true },
    async (span) => {
      await new Promise((resolve) => setImmediate(resolve))
      expect(span).toBeDefined()
      expect(trace.getSpan(context.active())).toBe(span)
      expect(holds.held).toBe(1)
      await inSpan('child', {}, async (child) => expect(child).toBeDefined())
    },
    { root: true },
  )
  expect(holds).toEqual({ held: 0, calls: 1 })
  // The export waits for the resource's detectors: the spans arrive a few turns later.
  await vi.waitFor(() => expect(exporter.getFinishedSpans()).toHaveLength(2))
  const [child, root] = exporter.getFinishedSpans()
  expect(root?.name).toBe('root')
  expect(child?.parentSpanContext?.spanId).toBe(root?.spanContext().spanId)
})

it('a root span the sampler drops gets no span and no context, and holds nothing', async () => {
  exporter.reset()
  const calls = holds.calls
  await inSpan(
    'dropped',
    { keep: false },
    async (span) => {
      expect(span).toBeUndefined()
      expect(trace.getSpan(context.active())).toBeUndefined()
      await inSpan('child', {}, async (child) => expect(child).toBeUndefined())
    },
    { root: true },
  )
  expect(holds.calls).toBe(calls)
  await new Promise((resolve) => setTimeout(resolve, 50))
  expect(exporter.getFinishedSpans()).toEqual([])
})

it('keeps an event’s trace context as a W3C traceparent whatever propagator requests use (OTEL_PROPAGATORS)', async () => {
  // As sdk.ts does; the global propagator then writes no traceparent (OTEL_PROPAGATORS=b3, say).
  useTracer(trace.getTracer('test'), scope, new W3CTraceContextPropagator())
  propagation.disable()
  expect(propagation.setGlobalPropagator(new CompositePropagator({ propagators: [] }))).toBe(true)
  try {
    const kept = await inSpan(
      'change',
      { keep: true },
      async (span) => ({ span, kept: currentTraceParent() }),
      {
        root: true,
      },
    )
    const ids = kept.span?.spanContext()
    expect(kept.kept).toBe(`00-${ids?.traceId}-${ids?.spanId}-01`)
    expect(linksTo([kept.kept]).map((link) => link.context.spanId)).toEqual([ids?.spanId])
  } finally {
    propagation.disable()
    propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  }
})
