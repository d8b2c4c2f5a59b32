import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { request } from 'node:http'
import { type AddressInfo, createServer } from 'node:net'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'

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

/** Spawns `node dist/main.js` on a fresh port with exactly `env` (and PATH): nothing else from ours. */
export async function spawnService(env: Record<string, string>): Promise<Service> {
  const port = await freePort()
  const child = spawn(process.execPath, ['dist/main.js'], {
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
