/**
 * Requests at a steady rate whatever the answers' speed (an open loop, a socket of its own for each
 * request in flight), for a latency beside other work: a stall of the service holds every request sent
 * during it, none is held back by the one before. autocannon's `overallRate` is a closed loop per
 * connection (a connection waits for its answer before its next request) and keeps whole milliseconds:
 * at 2 ms, one millisecond more reads as 1.5×.
 */
import { Agent, request } from 'node:http'
import { setTimeout as delay } from 'node:timers/promises'
import { quantile } from './deliveries.js'

export interface SteadyLoad {
  url: string
  headers: Record<string, string>
  perSec: number
  seconds: number
}

export interface SteadyResult {
  /** Answers 200, and the others (or errors). */
  ok: number
  failures: number
  /** Sent-to-answered, over every request, in ms (to the µs). */
  p50Ms: number
  p99Ms: number
}

export async function steadyLoad(load: SteadyLoad): Promise<SteadyResult> {
  const agent = new Agent({ keepAlive: true })
  const get = () =>
    new Promise<number>((resolve) => {
      const req = request(load.url, { agent, headers: load.headers }, (response) => {
        response.resume().on('end', () => resolve(response.statusCode ?? 0))
      })
      req.on('error', () => resolve(0))
      req.end()
    })
  const intervalMs = 1000 / load.perSec
  const total = Math.round(load.perSec * load.seconds)
  const start = performance.now()
  const latencies: number[] = []
  const sent: Promise<boolean>[] = []
  for (let i = 0; i < total; i++) {
    await delay(Math.max(0, start + i * intervalMs - performance.now()))
    const sentAt = performance.now()
    sent.push(
      get().then((status) => {
        latencies.push(performance.now() - sentAt)
        return status === 200
      }),
    )
  }
  const ok = (await Promise.all(sent)).filter(Boolean).length
  agent.destroy()
  latencies.sort((a, b) => a - b)
  const round = (ms: number) => Math.round(ms * 1000) / 1000
  return {
    ok,
    failures: total - ok,
    p50Ms: round(quantile(latencies, 0.5)),
    p99Ms: round(quantile(latencies, 0.99)),
  }
}
