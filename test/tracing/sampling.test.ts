import { ROOT_CONTEXT } from '@opentelemetry/api'
import { SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base'
import { expect, test } from 'vitest'
import { logLine } from '../service-process.js'
import { startReceiver } from '../webhooks/harness.js'
import { tracedServices } from './traced-service.js'

/**
 * Head sampling (src/tracing/request-sampling.ts): a request is decided in its first hook with the configured
 * sampler; one sampled out gets no span at all, one kept exports under the trace id it was decided on.
 */

const traced = tracedServices('petstore-sampling-')
const serve = (env: Record<string, string>) =>
  traced.serve({ LOG_LEVEL: 'info', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', ...env })

test('sampling is decided at the door: a request sampled out makes no span and logs the trace id it was decided on; each kept one exports under the id its ratio chose', async () => {
  const receiver = await traced.receiver()
  const { service, listPets } = await serve({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_TRACES_SAMPLER: 'traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.5',
  })
  const requestIds: (string | null)[] = []
  for (let index = 0; index < 40; index++) requestIds.push((await listPets()).headers.get('x-request-id'))
  const lines = await Promise.all(
    requestIds.map((id) => logLine(service, (entry) => entry.reqId === id && 'statusCode' in entry)),
  )
  const ratio = new TraceIdRatioBasedSampler(0.5)
  const keptBy = (traceId: unknown) =>
    ratio.shouldSample(ROOT_CONTEXT, String(traceId)).decision === SamplingDecision.RECORD_AND_SAMPLED
  const kept = lines.filter((line) => 'span_id' in line)
  // 40 draws at one half: outside 5..35 once in about seven million runs.
  expect(kept.length).toBeGreaterThanOrEqual(5)
  expect(kept.length).toBeLessThanOrEqual(35)
  for (const line of lines) {
    expect(line.trace_id).toMatch(/^[0-9a-f]{32}$/)
    expect(keptBy(line.trace_id)).toBe('span_id' in line)
  }
  const spans = await receiver.waitFor((all) =>
    kept.every((line) => all.some((span) => span.spanId === line.span_id && span.traceId === line.trace_id)),
  )
  const keptTraces = new Set(kept.map((line) => line.trace_id))
  expect(
    spans.filter((span) => span.name === 'GET /v1/pets').every((span) => keptTraces.has(span.traceId)),
  ).toBe(true)
})

test('a caller that sampled its request out: not traced here either, and the log line carries its trace id', async () => {
  const receiver = await traced.receiver()
  const { service, listPets } = await serve({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url })
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
  const response = await listPets({ traceparent: `00-${traceId}-00f067aa0ba902b7-00` })
  const line = await logLine(service, (entry) => entry.reqId === response.headers.get('x-request-id'))
  expect(line.trace_id).toBe(traceId)
  expect(line).not.toHaveProperty('span_id')
  // One of its own after it is kept (parentbased_always_on): once that is exported, the first would have been.
  await listPets()
  const spans = await receiver.waitFor((all) => all.some((span) => span.name === 'GET /v1/pets'))
  expect(spans.some((span) => span.traceId === traceId)).toBe(false)
})

test('with OTEL_PROPAGATORS=b3multi a caller’s sampled B3 trace is kept and joined, whatever the ratio', async () => {
  const receiver = await traced.receiver()
  const { service, listPets } = await serve({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_PROPAGATORS: 'b3multi',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0',
  })
  const traceId = '80f198ee56343ba864fe8b2a57d3eff7'
  const parent = 'e457b5a2e4d86bd1'
  const response = await listPets({ 'x-b3-traceid': traceId, 'x-b3-spanid': parent, 'x-b3-sampled': '1' })
  const line = await logLine(service, (entry) => entry.reqId === response.headers.get('x-request-id'))
  expect(line.trace_id).toBe(traceId)
  const spans = await receiver.waitFor((all) => all.some((span) => span.spanId === line.span_id))
  expect(spans.find((span) => span.spanId === line.span_id)).toMatchObject({
    name: 'GET /v1/pets',
    traceId,
    parentSpanId: parent,
  })
})

test('a 404 traced because its caller sampled it: its handler span is a child named notFoundHandler', async () => {
  const receiver = await traced.receiver()
  const { service } = await serve({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_TRACES_SAMPLER: 'parentbased_always_off',
  })
  const missing = (headers: Record<string, string>) =>
    fetch(`http://127.0.0.1:${service.port}/no-such-page`, { headers })
  const untraced = await missing({})
  const traceId = 'a3ce929d0e0e47364bf92f3577b34da6'
  const sampled = await missing({ traceparent: `00-${traceId}-00f067aa0ba902b7-01` })
  expect([untraced.status, sampled.status]).toEqual([404, 404])
  const spans = await receiver.waitFor((all) => all.some((span) => span.name === 'notFoundHandler'))
  const request = spans.find((span) => span.traceId === traceId && span.kind === 2)
  const handler = spans.find((span) => span.name === 'notFoundHandler')
  expect(request?.name).toBe('GET')
  expect(handler).toMatchObject({ traceId, parentSpanId: request?.spanId })
  expect(spans.every((span) => span.traceId === traceId)).toBe(true)
})

test('every attempt of a traced change is kept, whatever the ratio: the dispatcher follows the link to its cause', async () => {
  const receiver = await traced.receiver()
  const hooks = await startReceiver(() => ({ status: 204 }))
  try {
    // No trace of its own is ever started here: only a caller's sampled request is traced.
    const { service, key } = await serve({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_TRACES_SAMPLER: 'parentbased_always_off',
      PETSTORE_WEBHOOKS_ALLOW_PRIVATE: '1',
    })
    const post = (path: string, body: object, headers: Record<string, string> = {}) =>
      fetch(`http://127.0.0.1:${service.port}/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      })
    const url = `http://127.0.0.1:${hooks.port}/hook`
    const subscribed = await post('/webhook_endpoints', { url, events: ['pet.created'] })
    expect(subscribed.status).toBe(201)
    const { id } = (await subscribed.json()) as { id: string }
    expect((await post('/pets', { name: 'untraced', categoryId: 1 })).status).toBe(201)
    // Its attempt written down as succeeded: its span, had it been kept, ended and was queued before any
    // span of the traced change's (the batch queue sends them in that order).
    const delivered = async () => {
      const log = await fetch(`http://127.0.0.1:${service.port}/v1/webhook_endpoints/${id}/deliveries`, {
        headers: { authorization: `Bearer ${key}` },
      })
      return ((await log.json()) as { status: string }[]).some((attempt) => attempt.status === 'succeeded')
    }
    await expect.poll(delivered, { timeout: 10_000 }).toBe(true)
    const traceId = '5bf92f3577b34da6a3ce929d0e0e4736'
    const traceparent = `00-${traceId}-00f067aa0ba902b7-01`
    expect((await post('/pets', { name: 'traced', categoryId: 1 }, { traceparent })).status).toBe(201)
    await hooks.waitFor(2)
    const linked = (span: { links: { traceId: string }[] }) =>
      span.links.some((link) => link.traceId === traceId)
    await receiver.waitFor((all) => all.some((span) => span.name === 'webhook attempt' && linked(span)))
    const attempts = receiver.spans.filter((span) => span.name === 'webhook attempt')
    expect(attempts).toHaveLength(1)
    expect(attempts.every(linked)).toBe(true)
  } finally {
    await hooks.close()
  }
})
