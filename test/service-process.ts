import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { type AddressInfo, createServer, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { afterEach, beforeEach } from 'vitest'

/** The service and the CLI as child processes: `node dist/main.js` and `bin/petstore`. */

export const ROOT = join(import.meta.dirname, '..')

export type Service = {
  child: ChildProcess
  port: number
  stdout: () => string
  stderr: () => string
  /** Resolves with the exit code once the process has exited and its output is fully read. */
  exited: Promise<number | null>
}
export type Reply = { status: number; headers: Record<string, string | string[] | undefined>; body: string }
export type Run = { code: number | null; stdout: string; stderr: string }

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
}

/**
 * Spawns `node dist/main.js` (or `node <args>`) on a fresh port with exactly `env` (and PATH): nothing else
 * from ours.
 */
export async function spawnService(env: Record<string, string>, args = ['dist/main.js']): Promise<Service> {
  const port = await freePort()
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
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

/** The first match of `pattern` in what the process wrote (stderr unless told), waiting up to 30 s for it. */
export async function waitForLine(
  service: Service,
  pattern: RegExp,
  stream = service.stderr,
): Promise<RegExpExecArray> {
  for (let waited = 0; waited < 30_000; waited += 50) {
    const found = pattern.exec(stream())
    if (found) return found
    if (service.child.exitCode !== null) break
    await delay(50)
  }
  throw new Error(`no ${pattern} in: ${stream()}`)
}

/**
 * `count` processes of the service on one `env` (a shared database: they migrate it under a lock), each
 * healthy. They start at once, each ~2 s of CPU, on a machine that runs another suite beside: up to 30 s.
 */
export async function spawnInstances(count: number, env: Record<string, string>): Promise<Service[]> {
  const instances = await Promise.all(Array.from({ length: count }, () => spawnService(env)))
  try {
    await Promise.all(instances.map((service) => waitUntilHealthy(service, 600)))
  } catch (error) {
    // The caller never gets them: killed here, or they would outlive the test run.
    await Promise.all(instances.map(killService))
    throw error
  }
  return instances
}

/** SIGKILLs the service if it still runs and waits for it to be gone. */
export async function killService(service: Pick<Service, 'child'>): Promise<void> {
  const { child } = service
  if (child.exitCode !== null || child.signalCode !== null) return
  const gone = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGKILL')
  await gone
}

/** One GET on its own connection (no keep-alive pool), so closing servers see no idle sockets. */
export function get(port: number, path: string): Promise<Reply> {
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
export async function waitUntilHealthy(service: Service, tries = 200): Promise<void> {
  for (let attempt = 0; attempt < tries; attempt++) {
    if (service.child.exitCode !== null) throw new Error(`service exited: ${service.stderr()}`)
    const reply = await get(service.port, '/healthz').catch(() => undefined)
    if (reply?.status === 200) return
    await delay(50)
  }
  throw new Error(`service not healthy after ${tries} tries: ${service.stderr()}`)
}

/** Issues, with the CLI, an Enterprise key no test reaches the limits of; returns its id and key. */
export async function issueUnlimitedKey(env: Record<string, string>, cwd: string) {
  const limits = ['--per-minute', '1000000', '--per-day', '1000000']
  const run = await runCli(['keys', 'create', '--plan', 'enterprise', ...limits, '--json'], env, cwd)
  if (run.code !== 0) throw new Error(`keys create failed: ${run.stderr}`)
  return JSON.parse(run.stdout) as { id: number; key: string }
}

/** Runs `bin/petstore` as a child process with exactly `env` (and PATH), in `cwd`. */
export function runCli(args: string[], env: Record<string, string>, cwd: string): Promise<Run> {
  const fullEnv = { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env }
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(ROOT, 'bin', 'petstore'), ...args],
      { cwd, env: fullEnv, timeout: 15_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr })
      },
    )
  })
}

/**
 * A temporary directory and SQLite file for each test, and services on it that are killed after the test.
 * Call once at the top of a test file: it registers the hooks.
 */
export function serviceFixture() {
  const state = { dir: '', databaseUrl: '', children: [] as ChildProcess[] }
  beforeEach(() => {
    state.dir = mkdtempSync(join(tmpdir(), 'petstore-process-'))
    state.databaseUrl = `sqlite:${join(state.dir, 'petstore.sqlite')}`
  })
  afterEach(async () => {
    for (const child of state.children.splice(0)) await killService({ child })
    rmSync(state.dir, { recursive: true, force: true })
  })
  return {
    state,
    /** The service on the test's database. */
    start: async (env: Record<string, string> = {}): Promise<Service> => {
      const service = await spawnService({ DATABASE_URL: state.databaseUrl, ...env })
      state.children.push(service.child)
      return service
    },
    /** An Enterprise key no test reaches the limits of, on the test's database. */
    issueUnlimitedKey: async (): Promise<string> =>
      (await issueUnlimitedKey({ DATABASE_URL: state.databaseUrl }, state.dir)).key,
    /** A Free key from the CLI, on the test's database. */
    issueKey: async (): Promise<string> => {
      const env = { DATABASE_URL: state.databaseUrl }
      const run = await runCli(['keys', 'create', '--plan', 'free', '--json'], env, state.dir)
      return JSON.parse(run.stdout).key
    },
  }
}

/** Resolves with the first complete JSON log line on stdout that matches, once there is one. */
export function logLine(
  service: Service,
  matches: (line: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  const parse = (line: string) => (line.startsWith('{') ? JSON.parse(line) : {})
  return new Promise((resolve) => {
    const check = () => {
      const complete = service.stdout().split('\n').slice(0, -1).map(parse)
      const found = complete.find((line) => matches(line))
      if (found) {
        service.child.stdout?.off('data', check)
        resolve(found)
      }
    }
    service.child.stdout?.on('data', check)
    check()
  })
}

export type RawResponse = { status: number; head: string; body: string }

/** Reads one HTTP/1.1 response from a raw socket: status line, headers, then Content-Length bytes. */
export function readResponse(socket: Socket): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let data = ''
    socket.setEncoding('utf8')
    const onData = (chunk: string) => {
      data += chunk
      const end = data.indexOf('\r\n\r\n')
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(data)?.[1] ?? Number.NaN)
      if (end < 0 || data.length < end + 4 + length) return
      socket.off('data', onData).off('error', reject).off('close', onClose)
      resolve({ status: Number(data.slice(9, 12)), head: data.slice(0, end), body: data.slice(end + 4) })
    }
    const onClose = () => reject(new Error(`connection closed after ${JSON.stringify(data)}`))
    socket.on('data', onData).on('error', reject).on('close', onClose)
  })
}
