import type autocannon from 'autocannon'
import { cpuTicks, TICK_MICROSECONDS } from './cpu.js'
import { type LoadResult, runLoad, type ServerProcess } from './lib.js'
import type { Row } from './report.js'

export type Request = Pick<autocannon.Options, 'method' | 'headers' | 'body' | 'requests'> & { path: string }
export type Auth = Record<string, string>

export interface HarnessOptions {
  duration: number
  connections: number
  warmUp: number
  /**
   * Processes whose CPU each row reports per request, by part ("service" is always the server measured):
   * each entry lists the part's process ids at the moment it is asked.
   */
  parts?: Record<string, () => number[]>
}

/** The rows of one run: each measured after a warm-up, at the run's connections and duration. */
export function createHarness(options: HarnessOptions) {
  const rows: Row[] = []
  let ceiling = 0

  /** CPU (µs) of every part so far, the service's own counted from its process. */
  function cpuNow(server: ServerProcess): Record<string, number> {
    const pidsOf = { service: () => [server.child.pid ?? 0], ...options.parts }
    return Object.fromEntries(Object.entries(pidsOf).map(([part, pids]) => [part, cpuTicks(pids())]))
  }

  /** Runs `load` and records the row with each part's CPU per request. */
  async function recordLoad(
    name: string,
    server: ServerProcess,
    load: () => Promise<{ result: LoadResult; requests: number; note?: string | undefined }>,
  ): Promise<void> {
    const before = cpuNow(server)
    const { result, requests, note } = await load()
    const after = cpuNow(server)
    const cpuMicroseconds = Object.fromEntries(
      Object.entries(after).map(([part, ticks]) => [
        part,
        ((ticks - (before[part] ?? 0)) * TICK_MICROSECONDS) / Math.max(1, requests),
      ]),
    )
    if (name === 'ceiling') ceiling = result.requestsPerSec
    const row: Row = {
      name,
      ...result,
      ratioToCeiling: ceiling ? result.requestsPerSec / ceiling : 0,
      cpuMicroseconds,
      ...(note && { note }),
    }
    rows.push(row)
    const cpu = Object.entries(cpuMicroseconds)
      .map(([part, value]) => `${part} ${value.toFixed(0)} µs`)
      .join(', ')
    console.log(
      `${name.padEnd(20)} ${result.requestsPerSec.toFixed(0).padStart(7)} req/s  p50 ${result.p50Ms} ms  p99 ${result.p99Ms} ms  rss ${result.rssMB.toFixed(0)} MB  cpu/request: ${cpu}`,
    )
  }

  const target = (server: ServerProcess, request: Request, connections: number, duration: number) => ({
    ...request,
    url: `http://127.0.0.1:${server.port}${request.path}`,
    connections,
    duration,
  })

  return {
    rows,

    /** Warms the server up, then measures one row and records it. */
    async measure(name: string, server: ServerProcess, request: Request, note?: string): Promise<void> {
      const pid = server.child.pid ?? 0
      await runLoad(pid, target(server, request, options.connections, options.warmUp))
      await recordLoad(name, server, async () => {
        const result = await runLoad(pid, target(server, request, options.connections, options.duration))
        return { result, requests: result.requests, note }
      })
    },

    /**
     * `list` on 90% of the connections while the other 10% send `create` as fast as they can: every
     * create invalidates the page cache, so a cache cannot look good by never invalidating. The row is
     * the list's; CPU per request counts both.
     */
    async measureMixed(name: string, server: ServerProcess, list: Request, create: Request): Promise<void> {
      const writers = Math.max(1, Math.round(options.connections / 10))
      const pid = server.child.pid ?? 0
      await recordLoad(name, server, async () => {
        const [result, created] = await Promise.all([
          runLoad(pid, target(server, list, options.connections - writers, options.duration)),
          runLoad(pid, target(server, create, writers, options.duration)),
        ])
        const share = created.requestsPerSec / (created.requestsPerSec + result.requestsPerSec)
        const note = `${(100 * share).toFixed(0)}% of requests were creates, ${created.requestsPerSec.toFixed(0)}/s`
        return { result, requests: result.requests + created.requests, note }
      })
    },
  }
}

export async function withServer<T>(
  start: Promise<ServerProcess>,
  use: (server: ServerProcess) => Promise<T>,
): Promise<T> {
  const server = await start
  try {
    return await use(server)
  } finally {
    await server.stop()
  }
}

export const listRequest = (auth: Auth, limit = 20): Request => ({
  path: `/v1/pets?limit=${limit}`,
  headers: auth,
})

/** getPet over the 100,000 seeded ids in turn. */
export function getPetRequest(auth: Auth): Request {
  let next = 0
  const getPet = {
    setupRequest: (request: object) => ({ ...request, path: `/v1/pets/${(next++ % 100_000) + 1}` }),
  }
  return { path: '/v1/pets/1', headers: auth, requests: [getPet] }
}

export function createRequest(auth: Auth): Request {
  const body = JSON.stringify({ name: 'Bench', categoryId: 7, status: 'available' })
  return { path: '/v1/pets', method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body }
}

/** placeOrder of pets 1, 2, 3… in turn: each must be `available` (seed with that status), and is ordered once. */
export function orderRequest(auth: Auth): Request {
  let next = 1
  const placeOrder = {
    setupRequest: (request: object) => ({ ...request, body: JSON.stringify({ petId: next++ }) }),
  }
  return {
    path: '/v1/store/orders',
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ petId: 1 }),
    requests: [placeOrder],
  }
}
