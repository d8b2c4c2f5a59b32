import type { FastifyInstance } from 'fastify'
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client'

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
    },
  }
}

export type Metrics = ReturnType<typeof createMetrics>

export function registerMetricsRoute(app: FastifyInstance, metrics: Metrics): void {
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.type(metrics.registry.contentType)
    return metrics.registry.metrics()
  })
}
