import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import autocannon from 'autocannon'
import SQLite from 'better-sqlite3'
import { createApiKeyService } from '../src/api-keys/api-keys.service.js'
import { systemClock } from '../src/clock.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { openSqlite } from '../src/db/sqlite.js'
import { createInventoryRepository } from '../src/orders/inventory.repository.js'
import { rssMB } from './rss.js'

const STATUSES = ['available', 'pending', 'sold', null] as const

/** Creates the schema and `count` pets in one transaction, and an Enterprise key out of reach. */
export async function seedDatabase(path: string, count: number): Promise<string> {
  const handle = openSqlite(path)
  await migrateToLatest(handle.db)
  const sqlite = new SQLite(path)
  const insert = sqlite.prepare(
    'INSERT INTO pets (name, category_id, status, created_at) VALUES (?, ?, ?, ?)',
  )
  sqlite.transaction(() => {
    for (let i = 1; i <= count; i++) insert.run(`Pet ${i}`, (i % 50) + 1, STATUSES[i % 4], i)
  })()
  sqlite.close()
  // One row per status, as the service's folding would leave them after a second.
  await createInventoryRepository(handle).compactStatusCounts()
  const keys = createApiKeyService({ handle, clock: systemClock, env: 'production' })
  const { key } = await keys.issueApiKey({ plan: 'enterprise', perMinute: 1e9, perDay: 1e9 })
  await handle.close()
  return key
}

export interface ServerProcess {
  port: number
  child: ChildProcess
  stop(): Promise<void>
}

/**
 * Starts a server in its own process (so the load generator does not share its core) and waits until
 * `portOf` finds its port in what it prints. Its output goes to a file, as a deployed service's does:
 * reading it through a pipe made the load generator, which shares the machine, slower with every line.
 */
export async function startProcess(
  command: string,
  args: string[],
  portOf: (output: string) => number | undefined,
  env: NodeJS.ProcessEnv = {},
): Promise<ServerProcess> {
  const logDir = mkdtempSync(join(tmpdir(), 'petstore-server-'))
  const logFile = join(logDir, 'output.log')
  const fd = openSync(logFile, 'w')
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', fd, fd] })
  closeSync(fd)
  const output = () => readFileSync(logFile, 'utf8')
  const removeLog = () => rmSync(logDir, { recursive: true, force: true })
  let port: number | undefined
  for (let waited = 0; port === undefined; waited += 50) {
    if (child.exitCode !== null || waited > 60_000) {
      child.kill('SIGKILL')
      const why = child.exitCode !== null ? `exited with ${child.exitCode}` : 'did not start in 60 s'
      const text = output()
      removeLog()
      throw new Error(`${args.join(' ')} ${why}: ${text}`)
    }
    await delay(50)
    port = portOf(output())
  }
  return {
    port,
    child,
    stop: async () => {
      if (child.exitCode !== null) return removeLog()
      child.kill('SIGTERM')
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000)
      await once(child, 'exit')
      clearTimeout(killer)
      removeLog()
    },
  }
}

/** `tsx` runs the TypeScript bench scripts; the service code itself is the same either way. */
export function startTsScript(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<ServerProcess> {
  return startProcess(process.execPath, ['--import', 'tsx', script, ...args], listeningPort, env)
}

export const listeningPort = (output: string) => Number(/listening (\d+)/.exec(output)?.[1]) || undefined

/**
 * The service as users run it (`npm start`: the compiled dist/main.js, default settings, info logs) on
 * the given SQLite file. The port comes from its "Server listening" log line.
 */
export function startService(
  databasePath: string,
  env: NodeJS.ProcessEnv = {},
  main = 'dist/main.js',
): Promise<ServerProcess> {
  const portOf = (output: string) =>
    Number(/listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1]) || undefined
  return startProcess(process.execPath, [main], portOf, {
    DATABASE_URL: `sqlite:${databasePath}`,
    PORT: '0',
    HOST: '127.0.0.1',
    ...env,
  })
}

export interface LoadResult {
  requestsPerSec: number
  p50Ms: number
  p99Ms: number
  rssMB: number
  /** Responses other than 2xx, errors and timeouts: a row with any is not a clean measurement. */
  failures: number
}

/** One bounded autocannon run against loopback, sampling the server's RSS while it runs. */
export async function runLoad(pid: number, options: autocannon.Options): Promise<LoadResult> {
  let peakRss = rssMB(pid)
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, rssMB(pid))
  }, 250)
  try {
    const result = await autocannon(options)
    return {
      requestsPerSec: result.requests.average,
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      rssMB: Math.max(peakRss, rssMB(pid)),
      failures: result.non2xx + result.errors + result.timeouts,
    }
  } finally {
    clearInterval(sampler)
  }
}
