import type { FastifyInstance } from 'fastify'
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import { droppedSpans } from '../tracing/dropped-spans.js'

/** Prometheus metrics of one app; each app has its own registry, so tests can build many. */
export function createMetrics() {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const requests = new Counter({
    name: 'petstore_http_requests_total',
    help: 'HTTP requests by route, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  })
  const durationHistogram = new Histogram({
    name: 'petstore_http_request_duration_seconds',
    help: 'HTTP request latency by route.',
    labelNames: ['route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  })
  const rateLimitRefusals = new Counter({
    name: 'petstore_rate_limit_refusals_total',
    help: 'Requests refused with 429, by reason (limited or banned) and subject (key or ip).',
    labelNames: ['reason', 'subject'] as const,
    registers: [registry],
  })
  const rateLimitFallbacks = new Counter({
    name: 'petstore_rate_limit_fallbacks_total',
    help: 'Decisions made by the per-instance store because the shared (Redis) store did not answer.',
    registers: [registry],
  })
  const webhookDeliveries = new Counter({
    name: 'petstore_webhook_deliveries_total',
    help:
      'Webhook attempts by outcome: succeeded, retried (failed; another attempt is scheduled), failed (no ' +
      'further attempt), lost (its lease ran out first; another instance makes it).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  })
  const webhookLag = new Histogram({
    name: 'petstore_webhook_delivery_lag_seconds',
    help: "From an event's commit to the start of its first attempt, per endpoint.",
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
    registers: [registry],
  })
  const queue = webhookQueueGauges(registry)
  spansDroppedCounter(registry)
  /** Counts a response; `route` is the route pattern, never the raw URL (bounded cardinality). */
  function observeRequest(route: string, method: string, status: number, seconds: number): void {
    requests.inc({ route, method, status })
    durationHistogram.observe({ route }, seconds)
  }

  return {
    registry,
    observeRequest,
    rateLimitRefusals,
    rateLimitFallbacks,
    /** What the webhook dispatcher reports (webhooks/dispatcher.ts). */
    webhooks: {
      settled: (outcome: string) => webhookDeliveries.inc({ outcome }),
      lag: (seconds: number) => webhookLag.observe(seconds),
      /** Where the queue's gauges are read from at each scrape (server.ts, once the dispatcher runs). */
      probe: (probe: WebhookQueueProbe) => {
        queue.probe = probe
      },
    },
  }
}

export type Metrics = ReturnType<typeof createMetrics>

/** What the webhook queue's gauges show, read when /metrics is scraped. */
export interface WebhookQueueProbe {
  /** Events not fanned out yet, and the commit time (ms) of the oldest. */
  outbox(): Promise<{ depth: number; oldest: number | null }>
  /** Attempts due now, every endpoint's. */
  due(): Promise<number>
  /** Enabled endpoints whose circuit is open. */
  circuitOpen(): Promise<number>
  /** This instance's requests in flight per account. */
  inFlightByAccount(): Map<number, number>
}

/** The queue's counts stop here (`petstore_webhook_outbox_depth`, `…_attempts_due`): a scrape stays short. */
export const COUNTED_UP_TO = 100_000

/** Accounts shown in the in-flight gauge (the busiest): bounded labels whatever the number of accounts. */
export const TOP_ACCOUNTS = 10

/**
 * The webhook queue's gauges, read from the probe at each scrape. A probe that fails (the database is
 * away) leaves them as they were: /metrics still answers, and /readyz never reads them.
 */
function webhookQueueGauges(registry: Registry) {
  const state: { probe?: WebhookQueueProbe } = {}
  const gauge = (name: string, help: string, read: (probe: WebhookQueueProbe) => Promise<number>) => {
    const made: Gauge = new Gauge({
      name,
      help,
      registers: [registry],
      collect: async () => {
        if (!state.probe) return
        const value = await read(state.probe).catch(() => undefined)
        if (value !== undefined) made.set(value)
      },
    })
  }
  gauge(
    'petstore_webhook_outbox_depth',
    `Events committed and not yet fanned out to their endpoints, counted up to ${COUNTED_UP_TO}.`,
    async (probe) => (await probe.outbox()).depth,
  )
  gauge(
    'petstore_webhook_outbox_oldest_age_seconds',
    'Age of the next event to be fanned out, the oldest waiting (0 when none waits).',
    async (probe) => {
      const { oldest } = await probe.outbox()
      return oldest === null ? 0 : Math.max(0, Date.now() - oldest) / 1000
    },
  )
  gauge(
    'petstore_webhook_attempts_due',
    `Webhook attempts due now and not yet made, every endpoint of every instance, counted up to ${COUNTED_UP_TO}.`,
    (probe) => probe.due(),
  )
  gauge(
    'petstore_webhook_endpoints_circuit_open',
    'Enabled endpoints whose circuit is open (5 failures in a row: one request at a time).',
    (probe) => probe.circuitOpen(),
  )
  const inFlight = new Gauge({
    name: 'petstore_webhook_in_flight',
    help: `This instance's webhook requests in flight, for its ${TOP_ACCOUNTS} busiest accounts.`,
    labelNames: ['account'] as const,
    registers: [registry],
    collect: () => {
      inFlight.reset()
      if (!state.probe) return
      const top = [...state.probe.inFlightByAccount()].sort((a, b) => b[1] - a[1]).slice(0, TOP_ACCOUNTS)
      for (const [account, count] of top) inFlight.set({ account: String(account) }, count)
    },
  })
  return state
}

export function registerMetricsRoute(app: FastifyInstance, metrics: Metrics): void {
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.type(metrics.registry.contentType)
    return metrics.registry.metrics()
  })
}

/** Spans the tracing SDK gave up (tracing/sdk.ts counts them): the export never waits, it drops. */
function spansDroppedCounter(registry: Registry): void {
  new Counter({
    name: 'petstore_trace_spans_dropped_total',
    help:
      'Spans not exported, by reason: export_failed (the collector refused or did not answer in time), ' +
      'queue_full (more spans than the export queue holds while exports lag) or rejected (the collector ' +
      'took the batch but rejected these spans: a partial success). Always 0 with tracing off.',
    labelNames: ['reason'] as const,
    registers: [registry],
    collect() {
      this.reset()
      for (const [reason, count] of Object.entries(droppedSpans)) this.inc({ reason }, count)
    },
  })
}
