import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { Agent, request } from 'node:http'
import { connect, type Socket } from 'node:net'
import { setTimeout as delay } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import {
  freePort,
  get,
  logLine,
  ROOT,
  readResponse,
  runCli,
  type Service,
  serviceFixture,
  waitUntilHealthy,
} from './service-process.js'

/** SIGTERM: the drain of CONTRACT §12 (src/http/drain.ts), on the built service (`node dist/main.js`). */

const fixture = serviceFixture()

/**
 * A new connection once shutdown has begun: its outcome (a status or an error code). A connection that
 * races the listener's close is reset without an answer; only then is it tried again, a bounded number
 * of times.
 */
async function connectAfterShutdown(port: number, tries = 20): Promise<number | string | undefined> {
  for (let attempt = 1; ; attempt++) {
    const outcome = await get(port, '/healthz').then(
      (reply) => reply.status,
      (error: NodeJS.ErrnoException) => error.code,
    )
    if (outcome !== 'ECONNRESET' || attempt === tries) return outcome
    await delay(20)
  }
}

/**
 * `work`, or a failure naming the step and the service's last log lines once `ms` have passed: a step that
 * hangs says which it was, instead of the whole test timing out with nothing to go on.
 */
async function step<T>(service: Service, what: string, work: Promise<T>, ms = 8000): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const tail = service.stdout().split('\n').slice(-6).join('\n')
      reject(new Error(`${what}: nothing within ${ms} ms; the service's last lines:\n${tail}`))
    }, ms)
  })
  return Promise.race([work, expired]).finally(() => clearTimeout(timer))
}

/**
 * Starts a POST /v1/pets on a raw socket with half its body sent, sends SIGTERM, waits for the service to
 * notice, tries a new connection, then sends the rest of the body and reads the response.
 */
async function postDuringShutdown() {
  const service = await fixture.start({ LOG_LEVEL: 'debug' })
  await waitUntilHealthy(service)
  const key = await fixture.issueKey()
  const body = JSON.stringify({ name: 'Rex the draining dog', categoryId: 7, status: 'available' })
  const half = Math.floor(body.length / 2)
  const socket = connect(service.port, '127.0.0.1')
  const response = readResponse(socket)
  response.catch(() => undefined) // awaited below; this only keeps an early failure from going unhandled
  socket.write(
    'POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
      `Authorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n` +
      body.slice(0, half),
  )
  const received = (line: Record<string, unknown>) =>
    line.msg === 'request received' && JSON.stringify(line.req).includes('POST')
  await step(service, 'the POST logged as received', logLine(service, received))
  service.child.kill('SIGTERM')
  const shutting = (line: Record<string, unknown>) => String(line.msg).startsWith('shutting down')
  await step(service, 'shutdown logged after SIGTERM', logLine(service, shutting))
  const fresh = await step(service, 'a new connection during the drain', connectAfterShutdown(service.port))
  socket.write(body.slice(half))
  return { service, socket, fresh, response: await step(service, "the POST's response", response) }
}

describe('SIGTERM', () => {
  it('finishes the request in flight, refuses new connections and exits 0', async () => {
    const { service, socket, fresh, response } = await postDuringShutdown()
    expect([503, 'ECONNREFUSED']).toContain(fresh)
    expect(response.status).toBe(201)
    expect(JSON.parse(response.body)).toEqual({
      id: expect.any(Number),
      name: 'Rex the draining dog',
      categoryId: 7,
      status: 'available',
    })
    socket.end()
    expect(await service.exited).toBe(0)
  })

  // npm signals its own child: without `exec` in the start script that child is a shell, which does not
  // pass SIGTERM on, and node kept running after npm had exited.
  it('kill -TERM of `npm start` reaches node: it drains, exits and frees its port', async () => {
    const port = await freePort()
    const env = {
      ...process.env,
      DATABASE_URL: fixture.state.databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
    }
    const npm = spawn('npm', ['start'], { cwd: ROOT, env, stdio: 'ignore' })
    fixture.state.children.push(npm)
    const service = { child: npm, port, stdout: () => '', stderr: () => '', exited: once(npm, 'exit') }
    await waitUntilHealthy(service as unknown as Service)
    npm.kill('SIGTERM')
    await service.exited
    let answered = true
    for (let attempt = 0; attempt < 50 && answered; attempt++) {
      answered = await get(port, '/healthz').then(
        () => true,
        () => false,
      )
      if (answered) await delay(100)
    }
    expect(answered, 'node still answers after npm exited').toBe(false)
  })

  // A response sent while closing says `Connection: close`: a kept-alive client cannot hold the
  // process for Fastify's 72 s keep-alive timeout.
  it('exits without waiting for the client to hang up its kept-alive connection', async () => {
    const { service, response } = await postDuringShutdown()
    expect(response.status).toBe(201)
    const timedOut = delay(3000).then(() => 'still running')
    expect(await Promise.race([service.exited, timedOut])).toBe(0)
  })
})

type Outcome = { status: number; connection: string | undefined; afterSignal: boolean } | { error: string }

/** GET /v1/pets in a loop on one kept-alive connection until a request fails; every outcome, in order. */
async function keepAliveLoop(port: number, key: string, signalled: () => boolean): Promise<Outcome[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const outcomes: Outcome[] = []
  for (;;) {
    const sentAfterSignal = signalled()
    const outcome = await new Promise<Outcome>((resolve) => {
      const headers = { authorization: `Bearer ${key}` }
      request({ host: '127.0.0.1', port, path: '/v1/pets?limit=5', agent, headers }, (res) => {
        res.resume()
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            connection: res.headers.connection,
            afterSignal: sentAfterSignal,
          }),
        )
      })
        .on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }))
        .end()
    })
    outcomes.push(outcome)
    if ('error' in outcome) break
  }
  agent.destroy()
  return outcomes
}

/** A raw kept-alive connection that has had one answer and is now idle. */
async function idleConnection(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1')
  const reply = readResponse(socket)
  socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
  expect((await reply).status).toBe(200)
  return socket
}

describe('SIGTERM under load and with idle connections', () => {
  // Node's server.close() destroyed idle kept-alive connections at once: a client that had just sent its
  // next request on one got ECONNRESET. Now every connection ends after a response that says so.
  it('resets no request on a kept-alive connection: each is answered, or its new connection refused', async () => {
    const service = await fixture.start({ LOG_LEVEL: 'silent' })
    await waitUntilHealthy(service)
    const key = await fixture.issueUnlimitedKey()
    let signalled = false
    const loops = Array.from({ length: 16 }, () => keepAliveLoop(service.port, key, () => signalled))
    await delay(500)
    signalled = true
    service.child.kill('SIGTERM')
    const outcomes = (await Promise.all(loops)).flat()
    const errors = outcomes.flatMap((outcome) => ('error' in outcome ? [outcome.error] : []))
    expect(new Set(errors)).toEqual(new Set(['ECONNREFUSED']))
    const answered = outcomes.filter((outcome) => 'status' in outcome)
    expect(answered.length).toBeGreaterThan(16)
    expect(answered.every((outcome) => outcome.status === 200)).toBe(true)
    const drained = answered.filter((outcome) => outcome.afterSignal)
    expect(drained.length).toBeGreaterThan(0)
    expect(drained.at(-1)?.connection).toBe('close')
    const signalledAt = Date.now()
    expect(await service.exited).toBe(0)
    console.info(
      `SIGTERM under load (16 kept-alive connections): ${answered.length} answered (${drained.length} sent after the signal, all 200), ${errors.length} new connections refused, 0 reset; exited 0, ${Date.now() - signalledAt} ms after the last refusal`,
    )
  })

  it('answers /readyz 503 at once on an open connection, closes idle ones, and exits by PETSTORE_DRAIN_SECONDS', async () => {
    const service = await fixture.start({ LOG_LEVEL: 'silent', PETSTORE_DRAIN_SECONDS: '3' })
    await waitUntilHealthy(service)
    const key = await fixture.issueKey()
    // A request that never completes holds the drain open until its deadline.
    const stuck = connect(service.port, '127.0.0.1')
    stuck.on('error', () => {})
    stuck.write(
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
    )
    const asking = await idleConnection(service.port)
    const idle = await idleConnection(service.port)
    const idleClosed = once(idle, 'close')
    const started = Date.now()
    service.child.kill('SIGTERM')
    // New connections are refused from the moment the drain begins: poll until they are.
    let outcome: number | string | undefined = 200
    for (let tries = 0; tries < 100 && outcome === 200; tries++)
      outcome = await connectAfterShutdown(service.port)
    expect(outcome).toBe('ECONNREFUSED')
    const ready = readResponse(asking)
    asking.write('GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    const readiness = await ready
    expect(readiness.status).toBe(503)
    expect(JSON.parse(readiness.body)).toMatchObject({ code: 'unavailable', status: 503 })
    expect(readiness.head).toMatch(/\r\nconnection: close/i)
    await idleClosed
    expect(Date.now() - started).toBeLessThan(2500)
    expect(await service.exited).toBe(0)
    const took = Date.now() - started
    expect(took).toBeGreaterThanOrEqual(2900)
    expect(took).toBeLessThan(6000)
  })

  it('writes the usage counted since the last flush before it exits', async () => {
    const service = await fixture.start({ LOG_LEVEL: 'silent' })
    await waitUntilHealthy(service)
    const key = await fixture.issueKey()
    const headers = { authorization: `Bearer ${key}` }
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`http://127.0.0.1:${service.port}/v1/pets`, { headers })
      expect(response.status).toBe(200)
    }
    service.child.kill('SIGTERM')
    expect(await service.exited).toBe(0)
    const env = { DATABASE_URL: fixture.state.databaseUrl }
    const run = await runCli(['keys', 'usage', '1', '--days', '1', '--json'], env, fixture.state.dir)
    expect(JSON.parse(run.stdout).days[0]).toMatchObject({ '2xx': 3, '4xx': 0, '429': 0, '5xx': 0 })
  })
})
