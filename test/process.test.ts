import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  freePort,
  get,
  killService,
  ROOT,
  runCli,
  type Service,
  spawnService,
  waitUntilHealthy,
} from './service-process.js'

let dir: string
let databaseUrl: string
const children: ChildProcess[] = []

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-process-'))
  databaseUrl = `sqlite:${join(dir, 'petstore.sqlite')}`
})

afterEach(async () => {
  for (const child of children.splice(0)) await killService({ child })
  rmSync(dir, { recursive: true, force: true })
})

/** The service on the test's database. */
function startService(env: Record<string, string> = {}): Promise<Service> {
  return spawnService({ DATABASE_URL: databaseUrl, ...env }).then((service) => {
    children.push(service.child)
    return service
  })
}

/** Resolves once a complete JSON log line on stdout matches. */
function logLine(service: Service, matches: (line: Record<string, unknown>) => boolean): Promise<void> {
  const parse = (line: string) => (line.startsWith('{') ? JSON.parse(line) : {})
  return new Promise((resolve) => {
    const check = () => {
      const complete = service.stdout().split('\n').slice(0, -1)
      if (complete.some((line) => matches(parse(line)))) {
        service.child.stdout?.off('data', check)
        resolve()
      }
    }
    service.child.stdout?.on('data', check)
    check()
  })
}

async function issueKey(): Promise<string> {
  const run = await runCli(['keys', 'create', '--plan', 'free', '--json'], { DATABASE_URL: databaseUrl }, dir)
  return JSON.parse(run.stdout).key
}

/** Reads one HTTP/1.1 response from a raw socket: status line, headers, then Content-Length bytes. */
function readResponse(socket: Socket): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    let data = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk) => {
      data += chunk
      const end = data.indexOf('\r\n\r\n')
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(data)?.[1] ?? Number.NaN)
      if (end < 0 || data.length < end + 4 + length) return
      resolve({ status: Number(data.slice(9, 12)), body: data.slice(end + 4) })
    })
    socket.on('error', reject)
    socket.on('close', () => reject(new Error(`connection closed after ${JSON.stringify(data)}`)))
  })
}

describe('start-up configuration', () => {
  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PETSTORE_ENV', 'prod'],
    ['DATABASE_URL', 'mysql://x'],
    ['LOG_LEVEL', 'loud'],
    ['CORS_ORIGINS', 'not-an-origin'],
    ['PETSTORE_PUBLIC_URL', 'https://x.example/v2'],
    ['METRICS_PORT', '-1'],
  ])('stops with exit code 1 and one line naming %s when it is %j', async (variable, value) => {
    const service = await startService({ [variable]: value })
    expect(await service.exited).toBe(1)
    const lines = service.stderr().split('\n').filter(Boolean)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(variable)
    expect(lines[0]).toContain(JSON.stringify(value))
    expect(service.stderr()).not.toMatch(/^\s+at /m)
    expect(service.stdout()).toBe('')
    expect(existsSync(join(dir, 'petstore.sqlite'))).toBe(false)
  })
})

describe('a good start', () => {
  it('serves /healthz and creates and migrates the SQLite file', async () => {
    const service = await startService({ LOG_LEVEL: 'silent' })
    await waitUntilHealthy(service)
    const health = await get(service.port, '/healthz')
    expect(health.status).toBe(200)
    expect(JSON.parse(health.body)).toEqual({ status: 'ok' })
    expect((await get(service.port, '/readyz')).status).toBe(200)
    const db = new Database(join(dir, 'petstore.sqlite'), { readonly: true })
    const tables = db.prepare("select name from sqlite_master where type = 'table'").pluck().all()
    db.close()
    expect(tables).toEqual(expect.arrayContaining(['pets', 'api_keys', 'idempotency_keys']))
  })
})

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
 * Starts a POST /v1/pets on a raw socket with half its body sent, sends SIGTERM, waits for the service to
 * notice, tries a new connection, then sends the rest of the body and reads the response.
 */
async function postDuringShutdown() {
  const service = await startService({ LOG_LEVEL: 'debug' })
  await waitUntilHealthy(service)
  const key = await issueKey()
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
  await logLine(
    service,
    (line) => line.msg === 'request received' && JSON.stringify(line.req).includes('POST'),
  )
  service.child.kill('SIGTERM')
  await logLine(service, (line) => String(line.msg).startsWith('shutting down'))
  const fresh = await connectAfterShutdown(service.port)
  socket.write(body.slice(half))
  return { service, socket, fresh, response: await response }
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
    const env = { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), HOST: '127.0.0.1' }
    const npm = spawn('npm', ['start'], { cwd: ROOT, env, stdio: 'ignore' })
    children.push(npm)
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

describe('METRICS_PORT', () => {
  it('serves /metrics on its own port and not on the API port', async () => {
    const metricsPort = await freePort()
    const service = await startService({ LOG_LEVEL: 'silent', METRICS_PORT: String(metricsPort) })
    await waitUntilHealthy(service)
    const metrics = await get(metricsPort, '/metrics')
    expect(metrics.status).toBe(200)
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/)
    expect(metrics.body).toContain('petstore_http_requests_total')
    expect(metrics.body).toMatch(/^petstore_http_requests_total\{[^}]*route="\/healthz"[^}]*\} [1-9]/m)
    const api = await get(service.port, '/metrics')
    expect(api.status).toBe(404)
    expect(api.headers['content-type']).toMatch(/^application\/json/)
    const error = JSON.parse(api.body)
    expect(error).toMatchObject({ code: 'not_found', status: 404, message: expect.any(String) })
    const allowed = ['code', 'message', 'status', 'requestId']
    expect(Object.keys(error).filter((field) => !allowed.includes(field))).toEqual([])
  })
})
