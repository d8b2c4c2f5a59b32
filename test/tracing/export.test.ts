import { createServer, type RequestListener } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { startServer } from '../../src/server.js'
import { freePort, get, logLine } from '../service-process.js'
import { tracedServices } from './traced-service.js'

/**
 * How tracing is switched and where its spans go: on only with an OTLP endpoint (and never with
 * OTEL_SDK_DISABLED=true), protobuf unless told JSON, and a collector that is down costs dropped spans,
 * counted, never a failed request. Off, the SDK is not even loaded.
 */

const traced = tracedServices('petstore-otlp-')
const serve = traced.serve

test('without OTEL_EXPORTER_OTLP_PROTOCOL the spans go as OTLP/protobuf', async () => {
  const receiver = await traced.receiver()
  const { listPets } = await serve({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url })
  expect((await listPets()).status).toBe(200)
  await expect.poll(() => receiver?.raw.length, { timeout: 10_000 }).toBeGreaterThan(0)
  expect(receiver.headers[0]?.['content-type']).toBe('application/x-protobuf')
  // Decoded by the OpenTelemetry project's own protobuf messages: the request's span, with its ids.
  const [server] = (await receiver.waitFor((spans) => spans.length > 0)).filter(
    (span) => span.name === 'GET /v1/pets',
  )
  expect(server).toMatchObject({ kind: 2, traceId: expect.stringMatching(/^[0-9a-f]{32}$/) })
  expect(server?.attributes['http.response.status_code']).toBe(200)
})

test('the export carries the headers of OTEL_EXPORTER_OTLP_HEADERS, percent-decoded, with the traces-only ones over them', async () => {
  const receiver = await traced.receiver()
  const { listPets } = await serve({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_HEADERS: 'api-key=s3cret%2C1, x-team = store',
    OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-team=pets',
  })
  expect((await listPets()).status).toBe(200)
  await expect.poll(() => receiver.headers.length, { timeout: 10_000 }).toBeGreaterThan(0)
  expect(receiver.headers[0]).toMatchObject({ 'api-key': 's3cret,1', 'x-team': 'pets' })
})

test('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT alone turns tracing on; OTEL_SDK_DISABLED=true keeps it off', async () => {
  const receiver = await traced.receiver()
  const on = await serve({
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  })
  await on.listPets()
  await receiver.waitFor((spans) => spans.some((span) => span.name === 'GET /v1/pets'))

  const other = await traced.receiver()
  const off = await serve({
    LOG_LEVEL: 'info',
    OTEL_EXPORTER_OTLP_ENDPOINT: other.url,
    OTEL_SDK_DISABLED: 'true',
  })
  const response = await off.listPets()
  const requestId = response.headers.get('x-request-id')
  const line = await logLine(off.service, (entry) => entry.reqId === requestId)
  expect(line).not.toHaveProperty('trace_id')
  await new Promise((resolve) => setTimeout(resolve, 300))
  expect(other.raw).toHaveLength(0)
})

test('the service is named by OTEL_RESOURCE_ATTRIBUTES when OTEL_SERVICE_NAME is not set', async () => {
  const receiver = await traced.receiver()
  const { listPets } = await serve({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_RESOURCE_ATTRIBUTES: 'service.name=shop,deployment.environment.name=staging',
  })
  await listPets()
  const spans = await receiver.waitFor((all) => all.some((span) => span.name === 'GET /v1/pets'))
  expect(spans.find((span) => span.name === 'GET /v1/pets')?.service).toBe('shop')
})

test('the sampler follows a caller that sampled, and keeps none of its own at a ratio of 0', async () => {
  const receiver = await traced.receiver()
  const { service, listPets } = await serve({
    LOG_LEVEL: 'info',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0',
  })
  // First a request of its own (not kept at 0), then one whose caller sampled it (kept): once the second
  // is exported, the first, ended earlier, would have been too.
  const own = await listPets()
  const ownLine = await logLine(service, (entry) => entry.reqId === own.headers.get('x-request-id'))
  expect(ownLine.trace_id).toMatch(/^[0-9a-f]{32}$/)
  const traceId = '0af7651916cd43dd8448eb211c80319c'
  await listPets({ traceparent: `00-${traceId}-b7ad6b7169203331-01` })
  const spans = await receiver.waitFor((all) => all.some((span) => span.traceId === traceId))
  expect(spans.some((span) => span.traceId === ownLine.trace_id)).toBe(false)
})

test('a collector that is down: every request answers, and the spans it could not take are counted', async () => {
  const closedPort = await freePort()
  const { service, listPets } = await serve({
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${closedPort}`,
    OTEL_EXPORTER_OTLP_TIMEOUT: '500',
  })
  for (let index = 0; index < 20; index++) expect((await listPets()).status).toBe(200)
  await expect
    .poll(() => droppedSpans(service.port, 'export_failed'), { timeout: 15_000, interval: 200 })
    .toBeGreaterThan(0)
})

test("a variable the SDK replaces by its default at start-up: its warning is in the service's log", async () => {
  const receiver = await traced.receiver()
  // Not one the service checks (config.ts): the SDK reads it while it is built, warns, and runs on.
  const { service, listPets } = await serve({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_TIMEOUT: 'abc',
  })
  // Told before the service listened: once a request's line is written, so is the warning.
  const requestId = (await listPets()).headers.get('x-request-id')
  await logLine(service, (entry) => entry.reqId === requestId)
  const warnings = service
    .stdout()
    .split('\n')
    .filter((line) => line.includes('OTEL_EXPORTER_OTLP_TIMEOUT'))
    .map((line) => JSON.parse(line))
  expect(warnings[0]).toMatchObject({
    level: 40,
    msg: expect.stringMatching(/^tracing: .*'abc'.*using defaults/),
  })
})

/** What `/metrics` says the service dropped for `reason`. */
async function droppedSpans(port: number, reason: 'export_failed' | 'queue_full'): Promise<number> {
  const metrics = await get(port, '/metrics')
  const match = new RegExp(`petstore_trace_spans_dropped_total\\{reason="${reason}"\\} (\\d+)`).exec(
    metrics.body,
  )
  return Number(match?.[1] ?? 0)
}

/** A collector that answers each export as `answer` does, for `during`; closed after it. */
async function withCollector(answer: RequestListener, during: (endpoint: string) => Promise<void>) {
  const collector = createServer(answer)
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve))
  try {
    await during(`http://127.0.0.1:${(collector.address() as AddressInfo).port}`)
  } finally {
    collector.closeAllConnections()
    collector.close()
  }
}

/** A collector that takes the connection and never answers. */
const withHungCollector = (during: (endpoint: string) => Promise<void>) => withCollector(() => {}, during)

/** Answers 200 with its headers, then one byte every 300 ms, never ending: no socket is ever idle. */
const trickling: RequestListener = (request, response) => {
  request.resume()
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/x-protobuf' })
    response.flushHeaders()
    const trickle = setInterval(() => response.write('\0'), 300)
    response.on('close', () => clearInterval(trickle))
  })
}

test('a collector that trickles its answer: each batch unanswered by OTEL_BSP_EXPORT_TIMEOUT is counted', async () => {
  await withCollector(trickling, async (endpoint) => {
    const { service, listPets } = await serve({
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_TIMEOUT: '1000',
      OTEL_BSP_EXPORT_TIMEOUT: '1000',
      // Batches go at once, not after the default 5 s.
      OTEL_BSP_SCHEDULE_DELAY: '200',
    })
    // Five requests, so a handful of exports: past 30 open ones the exporter refuses the next at once.
    for (let index = 0; index < 5; index++) expect((await listPets()).status).toBe(200)
    // Each request's SERVER span at least, in batches that no answer ever ends.
    await expect
      .poll(() => droppedSpans(service.port, 'export_failed'), { timeout: 20_000, interval: 200 })
      .toBeGreaterThanOrEqual(5)
  })
})

test('a collector that takes the connection and never answers: the queue fills, its drops are counted', async () => {
  await withHungCollector(async (endpoint) => {
    const { service, listPets } = await serve({
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_TIMEOUT: '1000',
      OTEL_BSP_MAX_QUEUE_SIZE: '4',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2',
    })
    const dropped = async () => {
      // Requests keep coming: the batch processor reports its drops when a span next finds room.
      for (let index = 0; index < 10; index++) expect((await listPets()).status).toBe(200)
      return droppedSpans(service.port, 'queue_full')
    }
    await expect.poll(dropped, { timeout: 20_000, interval: 300 }).toBeGreaterThan(0)
  })
})

test('SIGTERM with a collector that never answers: the process exits within its drain budget', async () => {
  await withHungCollector(async (endpoint) => {
    const { service, listPets } = await serve({
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      // An export waits up to 30 s for an answer; the drain's budget is 2 s.
      OTEL_EXPORTER_OTLP_TIMEOUT: '30000',
      OTEL_BSP_SCHEDULE_DELAY: '60000',
      PETSTORE_DRAIN_SECONDS: '2',
    })
    expect((await listPets()).status).toBe(200)
    const signalled = Date.now()
    service.child.kill('SIGTERM')
    expect(await service.exited).toBe(0)
    // The budget, the least a flush gets, and the time to start and stop a process on a busy machine.
    expect(Date.now() - signalled).toBeLessThan(2_000 + 1_000 + 5_000)
  })
})

test('with tracing off no OpenTelemetry SDK module is loaded, and none is asked for', async () => {
  const loaded = () =>
    Object.keys(createRequire(import.meta.url).cache).filter((path) =>
      /@opentelemetry[\\/](sdk-|exporter-|otlp-)|@fastify[\\/]otel/.test(path),
    )
  const config = loadConfig({
    DATABASE_URL: `sqlite:${join(traced.dir(), 'off.sqlite')}`,
    LOG_LEVEL: 'silent',
    PORT: '0',
  })
  expect(config.tracing).toBeUndefined()
  const server = await startServer(config)
  try {
    const address = server.app.server.address()
    expect(address).not.toBeNull()
    expect(loaded()).toEqual([])
  } finally {
    await server.close()
  }
})
