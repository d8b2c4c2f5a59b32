import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { type AddressInfo, connect, createServer, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..')

type Service = {
  child: ChildProcess
  port: number
  stdout: () => string
  stderr: () => string
  /** Resolves with the exit code once the process has exited and its output is fully read. */
  exited: Promise<number | null>
}
type Reply = { status: number; headers: Record<string, string | string[] | undefined>; body: string }

let dir: string
let databaseUrl: string
const children: ChildProcess[] = []

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-process-'))
  databaseUrl = `sqlite:${join(dir, 'petstore.sqlite')}`
})

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGKILL')
      await gone
    }
  }
  rmSync(dir, { recursive: true, force: true })
})

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
}

/** Spawns `node dist/main.js` with a fresh port and the test's database; nothing else from our env. */
async function spawnService(env: Record<string, string> = {}): Promise<Service> {
  const port = await freePort()
  const child = spawn(process.execPath, ['dist/main.js'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: String(port), DATABASE_URL: databaseUrl, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (chunk) => {
    stdout += chunk
  })
  child.stderr?.on('data', (chunk) => {
    stderr += chunk
  })
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
  return { child, port, stdout: () => stdout, stderr: () => stderr, exited }
}

/** One request on its own connection (no keep-alive pool), so closing servers see no idle sockets. */
function get(port: number, path: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => {
        body += chunk
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

/** Polls /healthz a bounded number of times; fails as soon as the process exits. */
async function waitUntilHealthy(service: Service, tries = 100): Promise<void> {
  for (let attempt = 0; attempt < tries; attempt++) {
    if (service.child.exitCode !== null) throw new Error(`service exited: ${service.stderr()}`)
    const reply = await get(service.port, '/healthz').catch(() => undefined)
    if (reply?.status === 200) return
    await delay(50)
  }
  throw new Error(`service not healthy after ${tries} tries: ${service.stderr()}`)
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

function issueKey(): Promise<string> {
  return new Promise((resolve, reject) => {
    const env = { PATH: process.env.PATH, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' }
    execFile(
      process.execPath,
      [join(ROOT, 'bin/petstore'), 'keys', 'create', '--plan', 'free', '--json'],
      { cwd: dir, env },
      (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout).key)),
    )
  })
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
    const service = await spawnService({ [variable]: value })
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
    const service = await spawnService({ LOG_LEVEL: 'silent' })
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
  const service = await spawnService({ LOG_LEVEL: 'debug' })
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
    const service = await spawnService({ LOG_LEVEL: 'silent', METRICS_PORT: String(metricsPort) })
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
