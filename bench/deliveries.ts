/**
 * What the webhook benchmarks share: the receiver (bench/receiver.ts, a process of its own) and its
 * deliveries, the API calls that subscribe and create, and commit-to-arrival lags.
 */
import { setTimeout as delay } from 'node:timers/promises'
import { type ServerProcess, startTsScript } from './lib.js'

/** How long a scene waits for its last deliveries. */
const TAIL_WAIT_MS = 120_000

/** One POST the receiver took: its endpoint (the path), `webhook-id`, the event's createdAt, when it came. */
export interface Delivery {
  endpoint: string
  webhookId: string
  createdAt: number
  arrivedAt: number
}

export async function startReceiver() {
  const process = await startTsScript('bench/receiver.ts', [])
  const base = `http://127.0.0.1:${process.port}`
  const count = async () => ((await (await fetch(`${base}/count`)).json()) as { count: number }).count
  return {
    base,
    port: process.port,
    /** The receiver's process id (its CPU, read from /proc). */
    pid: process.child.pid ?? 0,
    count,
    deliveries: async (from = 0) =>
      (await (await fetch(`${base}/deliveries?from=${from}`)).json()) as Delivery[],
    /** Waits until `expected` more than `from` came (or TAIL_WAIT_MS passed). */
    async waitFor(from: number, expected: number): Promise<void> {
      const deadline = performance.now() + TAIL_WAIT_MS
      while ((await count()) - from < expected && performance.now() < deadline) await delay(50)
    },
    close: () => process.stop(),
  }
}
export type Receiver = Awaited<ReturnType<typeof startReceiver>>

export const api = (server: ServerProcess, key: string, method: string, path: string, body?: unknown) =>
  fetch(`http://127.0.0.1:${server.port}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })

export async function subscribe(server: ServerProcess, key: string, urls: string[], events = ['pet.*']) {
  for (const url of urls) {
    const response = await api(server, key, 'POST', '/webhook_endpoints', { url, events })
    if (response.status !== 201)
      throw new Error(`subscribing ${url}: ${response.status} ${await response.text()}`)
  }
}

/** One pet every `intervalMs`, `count` in all; the number that committed. */
export async function createAtRate(server: ServerProcess, key: string, count: number, intervalMs: number) {
  const start = performance.now()
  const sent: Promise<boolean>[] = []
  for (let i = 0; i < count; i++) {
    await delay(Math.max(0, start + i * intervalMs - performance.now()))
    sent.push(
      api(server, key, 'POST', '/pets', { name: `Scale ${i}`, categoryId: 1 }).then(async (response) => {
        await response.arrayBuffer()
        return response.status === 201
      }),
    )
  }
  return (await Promise.all(sent)).filter(Boolean).length
}

export const quantile = (sorted: number[], q: number) =>
  sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? 0

/** The first arrival of each (endpoint, event) among `deliveries`, and its commit-to-arrival lags, sorted. */
export function lagsOf(deliveries: Delivery[]) {
  const first = new Map<string, Delivery>()
  for (const delivery of deliveries) {
    const key = `${delivery.endpoint} ${delivery.webhookId}`
    if (!first.has(key)) first.set(key, delivery)
  }
  const lags = [...first.values()].map((d) => d.arrivedAt - d.createdAt).sort((a, b) => a - b)
  return {
    distinct: first.size,
    p50: quantile(lags, 0.5),
    p99: quantile(lags, 0.99),
    max: lags.at(-1) ?? 0,
    arrivals: [...first.values()],
  }
}
