import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import autocannon from 'autocannon'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import { createApiKeyService } from '../src/api-keys/api-keys.service.js'
import { systemClock } from '../src/clock.js'
import type { Database } from '../src/db/database.js'
import { migrateToLatest } from '../src/db/migrate.js'

const STATUSES = ['available', 'pending', 'sold', null] as const

/** Creates the schema and `count` pets in one transaction, and an Enterprise key out of reach. */
export async function seedDatabase(path: string, count: number): Promise<string> {
  const sqlite = new SQLite(path)
  sqlite.pragma('journal_mode = WAL')
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) })
  await migrateToLatest(db)
  const insert = sqlite.prepare(
    'INSERT INTO pets (name, category_id, status, created_at) VALUES (?, ?, ?, ?)',
  )
  sqlite.transaction(() => {
    for (let i = 1; i <= count; i++) insert.run(`Pet ${i}`, (i % 50) + 1, STATUSES[i % 4], i)
  })()
  const keys = createApiKeyService({ db, clock: systemClock, env: 'production' })
  const { key } = await keys.issueApiKey({ plan: 'enterprise', perMinute: 1e9, perDay: 1e9 })
  await db.destroy()
  return key
}

export interface BenchServer {
  port: number
  process: ChildProcess
  rssMB(): number
  stop(): Promise<void>
}

/** Starts `bench/server.ts` in its own process, so the load generator does not share its core. */
export async function startBenchServer(databasePath: string, args: string[] = []): Promise<BenchServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/server.ts', databasePath, ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const [line] = (await once(child.stdout as NodeJS.ReadableStream, 'data')) as [Buffer]
  const port = Number(/listening (\d+)/.exec(String(line))?.[1])
  if (!port) throw new Error(`bench server did not start: ${line}`)
  return {
    port,
    process: child,
    rssMB: () => rssOf(child.pid ?? 0),
    stop: async () => {
      child.kill('SIGTERM')
      await once(child, 'exit')
    },
  }
}

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024
}

export interface LoadResult {
  requestsPerSec: number
  p50Ms: number
  p99Ms: number
  non2xx: number
}

/** One bounded autocannon run against loopback. */
export async function runLoad(options: autocannon.Options): Promise<LoadResult> {
  const result = await autocannon({ ...options, url: options.url })
  return {
    requestsPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx + result.errors + result.timeouts,
  }
}
