/**
 * What the spans of one request cost before any code of ours runs: `npx tsx bench/tracing-floor.ts
 * [--rounds R --requests N]`. In one process, CPU time (user + system) per request, in alternating rounds
 * against the same calls with no SDK (the API's no-op tracer), median over the rounds: the OpenTelemetry
 * SDK the service runs (the 2.x line, its batch span processor) recording the four spans of a cached
 * listPets (the SERVER span with the attributes the service sets, `cache api key`, `handler listPets`,
 * `cache pet page`), then exporting them with the OTLP/protobuf exporter to a local collector's stand-in
 * in its own process (bench/otlp-sink.ts, whose CPU is not counted), and the same recorded but dropped
 * unread by the exporter. Parents are passed by hand, so no context manager runs, and nothing of
 * Fastify's or ours: a floor. docs/observability.md turns it into the best ratio a service answering
 * listPets at this machine's speed could reach with every span exported.
 */
import { setImmediate as nextTurn } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { ROOT_CONTEXT, SpanKind, type Tracer, trace } from '@opentelemetry/api'
import { ExportResultCode } from '@opentelemetry/core'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base'
import { median, startTsScript } from './lib.js'

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '8' },
    requests: { type: 'string', default: '20000' },
  },
})
const ROUNDS = Number(values.rounds)
const REQUESTS = Number(values.requests)
/** Requests between two turns of the event loop: the exporter's timers and sockets get theirs. */
const PER_TURN = 20

/** The CPU time (µs) of `work`, divided by `requests`. */
async function cpuPerRequest(requests: number, work: () => Promise<void>): Promise<number> {
  const before = process.cpuUsage()
  await work()
  const spent = process.cpuUsage(before)
  return (spent.user + spent.system) / requests
}

/** Alternating rounds of `without` and `with`, the order turned each round; the medians (µs a request). */
async function alternate(without: () => Promise<number>, withIt: () => Promise<number>) {
  await without()
  await withIt()
  const rounds = { without: [] as number[], with: [] as number[] }
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (['without', 'with'] as const) : (['with', 'without'] as const)
    for (const side of order) rounds[side].push(await (side === 'with' ? withIt : without)())
  }
  return { without: median(rounds.without), with: median(rounds.with), rounds }
}

/**
 * A cached listPets's spans as the service makes them: `@fastify/otel`'s SERVER span and handler span with
 * their attributes and ours (src/http/guard.ts, src/tracing/sdk.ts), and our two cache spans.
 */
function listPetsSpans(tracer: Tracer): void {
  const server = tracer.startSpan(
    'GET /v1/pets',
    {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': 'GET',
        'url.path': '/v1/pets',
        'http.route': '/v1/pets',
        'fastify.root': '@fastify/otel',
        'petstore.key.id': 2,
        'petstore.account.id': 2,
        'petstore.plan': 'enterprise',
        'petstore.key.scope': 'write',
        'petstore.rate_limit.decision': 'allowed',
      },
    },
    ROOT_CONTEXT,
  )
  const inServer = trace.setSpan(ROOT_CONTEXT, server)
  tracer.startSpan('cache api key', { attributes: { 'petstore.cache.hit': true } }, inServer).end()
  const handler = tracer.startSpan(
    'handler listPets',
    {
      attributes: {
        'hook.name': 'fastify -> @fastify/otel - route-handler',
        'fastify.type': 'request-handler',
        'hook.callback.name': 'listPets',
      },
    },
    inServer,
  )
  const inHandler = trace.setSpan(inServer, handler)
  tracer.startSpan('cache pet page', { attributes: { 'petstore.cache.hit': true } }, inHandler).end()
  handler.end()
  server.setAttribute('http.response.status_code', 200)
  server.end()
}

/** `exporter`, counting the spans of the batches it delivered (`delivered.spans`). */
function counting(exporter: SpanExporter, delivered: { spans: number }): SpanExporter {
  return {
    export: (spans, done) =>
      exporter.export(spans, (result) => {
        if (result.code === ExportResultCode.SUCCESS) delivered.spans += spans.length
        done(result)
      }),
    shutdown: () => exporter.shutdown(),
  }
}

/** An exporter that drops every batch unread: the spans recorded and batched, never encoded nor sent. */
const dropping: SpanExporter = {
  export: (_spans, done) => done({ code: ExportResultCode.SUCCESS }),
  shutdown: async () => {},
}

async function spansFloor(exporter: SpanExporter) {
  // The service's batch settings (the defaults) but a deeper queue: produced faster than the service
  // does, a queue of 2,048 would drop spans, and a dropped span costs nothing to export.
  const processor = new BatchSpanProcessor(exporter, { maxQueueSize: 2 ** 16 })
  const provider = new BasicTracerProvider({ spanProcessors: [processor] })
  const recording = provider.getTracer('petstore')
  const noop = trace.getTracer('petstore')
  const run = (tracer: Tracer) => () =>
    cpuPerRequest(REQUESTS, async () => {
      for (let done = 0; done < REQUESTS; done += PER_TURN) {
        for (let index = 0; index < PER_TURN; index++) listPetsSpans(tracer)
        await nextTurn()
      }
      // Every span of the round exported, on this round's clock.
      await processor.forceFlush()
    })
  try {
    return await alternate(run(noop), run(recording))
  } finally {
    await provider.shutdown()
  }
}

const sink = await startTsScript('bench/otlp-sink.ts', [])
try {
  const url = `http://127.0.0.1:${sink.port}/v1/traces`
  const delivered = { spans: 0 }
  const spans = await spansFloor(counting(new OTLPTraceExporter({ url }), delivered))
  const recorded = await spansFloor(dropping)
  const show = (name: string, floor: typeof spans) =>
    console.log(
      `${name}: without ${floor.without.toFixed(1)} µs, with ${floor.with.toFixed(1)} µs a request: ` +
        `+${(floor.with - floor.without).toFixed(1)} µs (rounds with ${floor.rounds.with.map((v) => v.toFixed(1)).join(' · ')})`,
    )
  console.log(`Node ${process.version}, ${ROUNDS} rounds of ${REQUESTS} requests`)
  show('spans exported', spans)
  show('spans recorded, dropped unread', recorded)
  // Every span of every round (4 a request, warm-up round included) should reach the collector: a span
  // lost costs nothing to export, so a run that lost any measured less than the floor.
  const made = (ROUNDS + 1) * REQUESTS * 4
  const lost = made > delivered.spans ? ' (some were lost: the floor above is too low)' : ''
  console.log(`spans delivered: ${delivered.spans} of ${made}${lost}`)
} finally {
  await sink.stop()
}
