import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http'
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net'
import { setTimeout as delay } from 'node:timers/promises'
import { afterEach, describe, expect, it } from 'vitest'
import {
  createAgentPool,
  KEEP_ALIVE_MS,
  MAX_POOLS,
  POOLS_PER_ENDPOINT,
  postWebhook,
  type WebhookRequest,
} from './send.js'

interface Received {
  method: string | undefined
  url: string | undefined
  headers: IncomingHttpHeaders
  body: string
}

const servers: Server[] = []

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((done) => server.close(done))
  }
})

/** A real HTTP server on 127.0.0.1 that records each request once its body has arrived, then answers. */
async function startReceiver(
  answer: (res: ServerResponse, req: IncomingMessage) => void = (res) => res.end(),
) {
  const received: Received[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      received.push({ method: req.method, url: req.url, headers: req.headers, body })
      answer(res, req)
    })
  })
  servers.push(server)
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening))
  return { port: (server.address() as AddressInfo).port, received, server }
}

function webhookTo(url: string, overrides: Partial<WebhookRequest> = {}): WebhookRequest {
  return {
    url: new URL(url),
    address: { address: '127.0.0.1', family: 4 },
    headers: { 'content-type': 'application/json' },
    body: '{}',
    timeoutMs: 5000,
    ...overrides,
  }
}

describe('postWebhook', () => {
  it('delivers the exact body and headers and reports a 2xx as success', async () => {
    const receiver = await startReceiver((res) => res.writeHead(204).end())
    const body = JSON.stringify({ type: 'pet.created', name: 'Crème brûlée' })
    const headers = {
      'content-type': 'application/json',
      'webhook-id': 'msg_1',
      'webhook-signature': 'v1,abc',
    }
    const response = await postWebhook(
      webhookTo(`http://127.0.0.1:${receiver.port}/hooks?x=1`, { headers, body }),
    )
    expect(response).toMatchObject({ httpStatus: 204, error: null, bodyExcerpt: '' })
    expect(response.retryAfterMs).toBeUndefined()
    const [delivery] = receiver.received
    expect(delivery).toMatchObject({ method: 'POST', url: '/hooks?x=1', body, headers })
    expect(delivery?.headers['content-length']).toBe(String(Buffer.byteLength(body)))
  })

  it('connects to the pinned address without looking the name up, keeping the name in Host', async () => {
    const receiver = await startReceiver((res) => res.end('thanks'))
    const response = await postWebhook(webhookTo(`http://hook.test:${receiver.port}/`))
    expect(response).toMatchObject({ httpStatus: 200, error: null, bodyExcerpt: 'thanks' })
    expect(receiver.received[0]?.headers.host).toBe(`hook.test:${receiver.port}`)
  })

  it('judges the answer that follows an informational 1xx, not the 1xx', async () => {
    const receiver = await startReceiver((res) => {
      res.writeProcessing()
      res.writeHead(201).end('made')
    })
    const response = await postWebhook(webhookTo(`http://127.0.0.1:${receiver.port}/`))
    expect(response).toMatchObject({ httpStatus: 201, error: null, bodyExcerpt: 'made' })
  })

  it('does not follow a redirect and reports it as a failure', async () => {
    const canary = await startReceiver()
    const redirector = await startReceiver((res) =>
      res.writeHead(302, { location: `http://127.0.0.1:${canary.port}/stolen` }).end(),
    )
    const response = await postWebhook(webhookTo(`http://127.0.0.1:${redirector.port}/`))
    expect(response).toMatchObject({ httpStatus: 302, error: 'HTTP 302 (redirects are not followed)' })
    expect(canary.received).toEqual([])
  })

  it('names the status and the start of the body of an error answer', async () => {
    const receiver = await startReceiver((res) => res.writeHead(500).end('database\n  on fire'))
    const response = await postWebhook(webhookTo(`http://127.0.0.1:${receiver.port}/`))
    expect(response).toMatchObject({ httpStatus: 500, error: 'HTTP 500: database on fire' })
    expect(response.bodyExcerpt).toBe('database\n  on fire')
  })

  it('gives up at the deadline when no answer comes', async () => {
    const receiver = await startReceiver(() => {})
    const response = await postWebhook(webhookTo(`http://127.0.0.1:${receiver.port}/`, { timeoutMs: 300 }))
    expect(response).toMatchObject({ httpStatus: null, error: 'timed out after 300 ms', bodyExcerpt: '' })
    expect(response.durationMs).toBeGreaterThanOrEqual(290)
    expect(response.durationMs).toBeLessThan(1000)
  })

  it('judges an answer whose body stalls on its status at the deadline', async () => {
    const receiver = await startReceiver((res) => res.writeHead(200).write('accepted, and then'))
    const response = await postWebhook(webhookTo(`http://127.0.0.1:${receiver.port}/`, { timeoutMs: 300 }))
    expect(response).toMatchObject({ httpStatus: 200, error: null, bodyExcerpt: 'accepted, and then' })
    // Judged when the deadline came (it read the body until then), not as soon as the status arrived.
    expect(response.durationMs).toBeGreaterThanOrEqual(290)
    expect(response.durationMs).toBeLessThan(1000)
  })

  it('keeps at most 1024 bytes of a 5 MB answer', async () => {
    const receiver = await startReceiver((res) => res.end(Buffer.alloc(5 * 1024 * 1024, 'x')))
    const response = await postWebhook(webhookTo(`http://127.0.0.1:${receiver.port}/`))
    expect(response).toMatchObject({ httpStatus: 200, error: null })
    expect(response.bodyExcerpt).toBe('x'.repeat(1024))
  })

  it('stops reading an answer that never ends once it has 1024 bytes', async () => {
    const receiver = await startReceiver((res) => {
      const chunk = Buffer.alloc(64 * 1024, 'y')
      const pour = () => {
        while (!res.destroyed && res.write(chunk)) {}
        if (!res.destroyed) res.once('drain', pour)
      }
      pour()
    })
    const response = await postWebhook(webhookTo(`http://127.0.0.1:${receiver.port}/`, { timeoutMs: 5000 }))
    expect(response).toMatchObject({ httpStatus: 200, error: null, bodyExcerpt: 'y'.repeat(1024) })
    expect(response.durationMs).toBeLessThan(2000)
  })

  it('does not cut a character in half at the 1024-byte limit', async () => {
    const receiver = await startReceiver((res) => res.end(`${'a'.repeat(1023)}€ and more`))
    const response = await postWebhook(webhookTo(`http://127.0.0.1:${receiver.port}/`))
    expect(response.bodyExcerpt).toBe('a'.repeat(1023))
  })

  it('reads Retry-After seconds of a 503', async () => {
    const receiver = await startReceiver((res) => res.writeHead(503, { 'retry-after': '7' }).end())
    const response = await postWebhook(webhookTo(`http://127.0.0.1:${receiver.port}/`))
    expect(response).toMatchObject({ httpStatus: 503, error: 'HTTP 503', retryAfterMs: 7000 })
  })

  it('reads a Retry-After date of a 429', async () => {
    const at = new Date(Date.now() + 60_000).toUTCString()
    const receiver = await startReceiver((res) => res.writeHead(429, { 'retry-after': at }).end())
    const response = await postWebhook(webhookTo(`http://127.0.0.1:${receiver.port}/`))
    expect(response.httpStatus).toBe(429)
    expect(response.retryAfterMs).toBeGreaterThan(55_000)
    expect(response.retryAfterMs).toBeLessThanOrEqual(60_000)
  })

  it('reports a refused connection in words', async () => {
    const closed = createServer()
    await new Promise<void>((listening) => closed.listen(0, '127.0.0.1', listening))
    const { port } = closed.address() as AddressInfo
    await new Promise((done) => closed.close(done))
    const response = await postWebhook(webhookTo(`http://127.0.0.1:${port}/`))
    expect(response).toMatchObject({ httpStatus: null, error: 'connection refused', bodyExcerpt: '' })
  })

  it('reports a TLS failure when https reaches a plain-http receiver', async () => {
    const receiver = await startReceiver()
    const response = await postWebhook(webhookTo(`https://hook.test:${receiver.port}/`))
    expect(response.httpStatus).toBeNull()
    expect(response.error).toBe('TLS failed: wrong version number')
  })

  it('stops when the signal aborts while waiting for the answer', async () => {
    const controller = new AbortController()
    const receiver = await startReceiver(() => controller.abort())
    const request = webhookTo(`http://127.0.0.1:${receiver.port}/`, { signal: controller.signal })
    const response = await postWebhook(request)
    expect(response).toMatchObject({ httpStatus: null, error: 'aborted' })
    expect(receiver.received).toHaveLength(1)
  })

  it('sends nothing when the signal is already aborted', async () => {
    const receiver = await startReceiver()
    const request = webhookTo(`http://127.0.0.1:${receiver.port}/`, { signal: AbortSignal.abort() })
    expect(await postWebhook(request)).toMatchObject({ httpStatus: null, error: 'aborted' })
    expect(receiver.received).toEqual([])
  })

  it('returns a header Node refuses as a failure rather than throwing', async () => {
    const receiver = await startReceiver()
    const request = webhookTo(`http://127.0.0.1:${receiver.port}/`, { headers: { 'x-bad': 'a\r\nb' } })
    const response = await postWebhook(request)
    expect(response.httpStatus).toBeNull()
    expect(response.error).toMatch(/x-bad/)
  })
})

describe('createAgentPool', () => {
  it('keeps connections alive per endpoint, origin and checked address, and reuses them only towards that address', async () => {
    const ports: number[] = []
    const receiver = await startReceiver((res, req) => {
      ports.push(req.socket.remotePort ?? 0)
      res.writeHead(204).end()
    })
    const pool = createAgentPool({ timeoutMs: 5000 })
    const url = new URL(`http://hook.test:${receiver.port}/in`)
    const loopback = { address: '127.0.0.1', family: 4 } as const
    const agent = pool.agentFor(1, url, loopback)
    expect(pool.agentFor(1, url, loopback)).toBe(agent)
    expect(pool.agentFor(1, url, { address: '127.0.0.2', family: 4 })).not.toBe(agent)
    // Another endpoint on the same host has connections of its own.
    expect(pool.agentFor(2, url, loopback)).not.toBe(agent)
    for (let i = 0; i < 3; i++) {
      const response = await postWebhook(webhookTo(url.href, { agent }))
      expect(response.error).toBeNull()
      // The pool takes the connection back once the turn that read the answer's end is over.
      await new Promise((turn) => setImmediate(turn))
    }
    // One connection for the three: the answer was read to its end each time, so the socket went back.
    expect(new Set(ports).size).toBe(1)
    pool.destroy()
  })

  it('closes an idle connection after KEEP_ALIVE_MS even when the receiver asks to keep it for 10 minutes', async () => {
    const sockets: Socket[] = []
    const receiver = await startReceiver((res, req) => {
      sockets.push(req.socket)
      res.writeHead(204, { 'keep-alive': 'timeout=600' }).end()
    })
    // The receiver keeps its side open as long as it said (Node's server would close it after 5 s).
    receiver.server.keepAliveTimeout = 600_000
    const pool = createAgentPool({ timeoutMs: 5000 })
    try {
      const url = new URL(`http://hook.test:${receiver.port}/in`)
      const agent = pool.agentFor(1, url, { address: '127.0.0.1', family: 4 })
      expect((await postWebhook(webhookTo(url.href, { agent }))).error).toBeNull()
      const [socket] = sockets
      const closed = new Promise<number>((done) => socket?.once('close', () => done(Date.now())))
      const idleFrom = Date.now()
      // undici's idle timers tick every second or so.
      const waited = await Promise.race([closed, delay(KEEP_ALIVE_MS + 4_000).then(() => Number.NaN)])
      expect(waited - idleFrom).toBeLessThan(KEEP_ALIVE_MS + 4_000)
    } finally {
      pool.destroy()
    }
  })

  it('beyond MAX_POOLS closes the pool used longest ago, and lets its requests in flight finish', async () => {
    const receiver = await startReceiver((res) => {
      setTimeout(() => res.writeHead(204).end(), 300)
    })
    const pool = createAgentPool({ timeoutMs: 5000 })
    const loopback = { address: '127.0.0.1', family: 4 } as const
    const busy = new URL(`http://busy.test:${receiver.port}/in`)
    const used = new URL(`http://used.test:${receiver.port}/in`)
    const usedAgent = pool.agentFor(2, used, loopback)
    const inFlight = postWebhook(webhookTo(busy.href, { agent: pool.agentFor(1, busy, loopback) }))
    // As many other endpoints as fill the pools, each at an address of its own.
    const other = new URL(`http://other.test:${receiver.port}/`)
    for (let n = 0; n < MAX_POOLS - 2; n++)
      pool.agentFor(3 + n, other, { address: `2001:db8::${n.toString(16)}`, family: 6 })
    // Used again just now: not the one used longest ago any more.
    expect(pool.agentFor(2, used, loopback)).toBe(usedAgent)
    // Two more: the busy endpoint's pool (the oldest) goes, then the first of the others.
    for (let n = 0; n < 2; n++) pool.agentFor(MAX_POOLS + n, other, loopback)
    expect(await inFlight).toMatchObject({ httpStatus: 204, error: null })
    expect(pool.agentFor(2, used, loopback)).toBe(usedAgent)
    pool.destroy()
  })

  it('an endpoint whose name answers a new address at every lookup closes its own pools, never another endpoint’s', async () => {
    const pool = createAgentPool({ timeoutMs: 5000 })
    const loopback = { address: '127.0.0.1', family: 4 } as const
    const kept = new URL('http://kept.test:9/')
    const keptAgent = pool.agentFor(1, kept, loopback)
    const churn = new URL('http://churn.test:9/')
    for (let n = 0; n < MAX_POOLS + 100; n++)
      pool.agentFor(2, churn, { address: `2001:db8::${n.toString(16)}`, family: 6 })
    expect(pool.agentFor(1, kept, loopback)).toBe(keptAgent)
    // The churning endpoint keeps its last POOLS_PER_ENDPOINT.
    const last = { address: `2001:db8::${(MAX_POOLS + 99).toString(16)}`, family: 6 } as const
    const lastAgent = pool.agentFor(2, churn, last)
    const fourthLast = {
      address: `2001:db8::${(MAX_POOLS + 100 - POOLS_PER_ENDPOINT).toString(16)}`,
      family: 6,
    } as const
    expect(pool.agentFor(2, churn, fourthLast)).toBeDefined()
    expect(pool.agentFor(2, churn, last)).toBe(lastAgent)
    pool.destroy()
  })

  it("gives up a connection still being made soon after the attempt's deadline, not only the attempt", async () => {
    // TCP is accepted but TLS never answers: the pool's connection is never made.
    const open = new Set<Socket>()
    const silent = createNetServer((socket) => {
      // Read (and drop) what comes, so that the sender hanging up is seen.
      socket.resume()
      open.add(socket)
      socket.on('close', () => open.delete(socket))
    })
    await new Promise<void>((listening) => silent.listen(0, '127.0.0.1', listening))
    const pool = createAgentPool({ timeoutMs: 300 })
    try {
      const url = new URL(`https://hook.test:${(silent.address() as AddressInfo).port}/in`)
      const agent = pool.agentFor(1, url, { address: '127.0.0.1', family: 4 })
      const response = await postWebhook(webhookTo(url.href, { agent, timeoutMs: 300 }))
      expect(response).toMatchObject({ httpStatus: null, error: 'timed out after 300 ms' })
      // undici's connection timers tick every second or so.
      await expect.poll(() => open.size, { timeout: 5_000 }).toBe(0)
    } finally {
      pool.destroy()
      for (const socket of open) socket.destroy()
      await new Promise((closed) => silent.close(closed))
    }
  })
})
