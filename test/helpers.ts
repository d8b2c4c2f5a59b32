import { mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import type { DestinationStream } from 'pino'
import type { TestContext } from 'vitest'
import type { Plan, Scope } from '../src/api-keys/api-keys.plans.js'
import { buildApp } from '../src/app.js'
import type { Clock } from '../src/clock.js'
import { loadConfig } from '../src/config.js'
import { createDeps, type Deps } from '../src/deps.js'

/**
 * A clock that moves only when told. Its monotonic reading starts at the wall clock's and moves with it
 * as time passes (`advance`, `set` forward), so a test that only lets time pass sees one time;
 * `stepWall` sets the wall clock alone, as NTP or a VM's resume does.
 */
export class FakeClock implements Clock {
  private elapsed: number
  constructor(private current = Date.UTC(2027, 0, 1)) {
    this.elapsed = current
  }
  now(): number {
    return this.current
  }
  monotonic(): number {
    return this.elapsed
  }
  /** Time passes up to `ms`; an earlier `ms` sets the wall clock back alone (time never runs backwards). */
  set(ms: number): void {
    this.advance(ms - this.current)
  }
  /** Time passes (a negative `ms` sets the wall clock back alone). */
  advance(ms: number): void {
    this.current += ms
    this.elapsed += Math.max(0, ms)
  }
  /** The wall clock is set `ms` later (earlier when negative) while no time passes. */
  stepWall(ms: number): void {
    this.current += ms
  }
}

const OUT_OF_REACH = { perMinute: 1_000_000_000, perDay: 1_000_000_000 }

export interface TestApp {
  app: FastifyInstance
  deps: Deps
  clock: FakeClock
  dir: string
  /** The app's DATABASE_URL, for a second connection as an operator would open. */
  databaseUrl: string
  /**
   * Issues a key on the app's database and returns it, ready for `Authorization: Bearer`. Without a
   * plan: an Enterprise key whose limits no test reaches, for tests that are not about rate limits.
   */
  issueKey(plan?: Plan, custom?: { perMinute: number; perDay: number }, scope?: Scope): Promise<string>
  /** `Authorization` and JSON headers for a key. */
  auth(key: string): Record<string, string>
  close(): Promise<void>
}

export interface TestAppOptions {
  env?: Record<string, string>
  logDestination?: DestinationStream
}

/**
 * Which stores the HTTP suites run on: the embedded SQLite file (`npm test`), or PostgreSQL and Redis
 * (`npm run test:services` sets PETSTORE_TEST_BACKEND=services and the servers' addresses).
 */
export const onServices = process.env.PETSTORE_TEST_BACKEND === 'services'

export interface TestStores {
  env: Record<string, string>
  drop(): Promise<void>
}

/**
 * A fresh SQLite file in `dir`, or (see `onServices`) a fresh PostgreSQL database and a Redis key prefix
 * of its own: the environment for an app or a service process, and how to drop what it made.
 */
export async function createTestStores(dir: string): Promise<TestStores> {
  if (!onServices)
    return { env: { DATABASE_URL: `sqlite:${join(dir, 'petstore.sqlite')}` }, drop: async () => {} }
  const { createTestDatabase, isolatedRedisUrl } = await import('./services/test-stores.js')
  const database = await createTestDatabase()
  const env: Record<string, string> = { DATABASE_URL: database.url, REDIS_URL: isolatedRedisUrl() }
  return { env, drop: database.drop }
}

/** A fresh app on fresh stores (SQLite in a temporary folder, or see `onServices`); close() removes them. */
export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-test-'))
  const stores = await createTestStores(dir)
  const config = loadConfig({
    ...stores.env,
    LOG_LEVEL: options.logDestination ? 'info' : 'silent',
    ...options.env,
  })
  const clock = new FakeClock()
  const deps = await createDeps(config, { clock, logDestination: options.logDestination })
  const app = await buildApp(deps)
  await app.ready()
  return {
    app,
    deps,
    clock,
    dir,
    databaseUrl: options.env?.DATABASE_URL ?? stores.env.DATABASE_URL ?? '',
    issueKey: async (plan = 'enterprise', custom, scope) => {
      const limits = custom ?? (plan === 'enterprise' ? OUT_OF_REACH : {})
      const issued = await deps.apiKeys.issueApiKey({ plan, ...limits, scope })
      return issued.key
    },
    auth: (key) => ({ authorization: `Bearer ${key}` }),
    close: async () => {
      await app.close()
      await deps.close()
      await stores.drop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * fastify/demo's `build(t)`: a fresh app on fresh stores for the test whose context is given (from a test or
 * its beforeEach), closed when that test finishes, so no test sees what another changed.
 *
 * @example beforeEach(async (context) => { t = await build(context) })
 */
export async function build(
  context: Pick<TestContext, 'onTestFinished'>,
  options?: TestAppOptions,
): Promise<TestApp> {
  const t = await buildTestApp(options)
  context.onTestFinished(() => t.close())
  return t
}

export interface ServedApp extends TestApp {
  /** `http://127.0.0.1:<port>`, and `${origin}/v1`: what a client is given as its base URL. */
  origin: string
  baseUrl: string
  port: number
}

/** buildTestApp, listening on a free loopback port: for real HTTP clients, raw sockets and browsers. */
export async function serveTestApp(options?: TestAppOptions): Promise<ServedApp> {
  const t = await buildTestApp(options)
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = t.app.server.address() as AddressInfo
  const origin = `http://127.0.0.1:${port}`
  return { ...t, origin, port, baseUrl: `${origin}/v1` }
}

/** How many pets the app's database holds: bad requests must leave it unchanged. */
export async function countPets(t: Pick<TestApp, 'deps'>): Promise<number> {
  const row = await t.deps.database.db
    .selectFrom('pets')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/**
 * Runs statements on a second connection to the app's database, as an operator's shell would: the
 * service learns of them only through the database. Returns the connection's `close`.
 */
export async function operatorConnection(
  t: Pick<TestApp, 'databaseUrl'>,
): Promise<{ exec(statement: string): Promise<void>; close(): Promise<void> }> {
  if (t.databaseUrl.startsWith('sqlite:')) {
    const SQLite = (await import('better-sqlite3')).default
    const db = new SQLite(t.databaseUrl.slice('sqlite:'.length))
    return { exec: async (statement) => void db.exec(statement), close: async () => void db.close() }
  }
  const pg = (await import('pg')).default
  const client = new pg.Client({ connectionString: t.databaseUrl })
  await client.connect()
  return { exec: async (statement) => void (await client.query(statement)), close: () => client.end() }
}

/**
 * Holds a write lock on the pets from another connection until the returned function is called, so
 * the app's writes wait out its busy (or statement) timeout: SQLite `BEGIN EXCLUSIVE`, PostgreSQL
 * `LOCK TABLE`.
 */
export async function lockPets(t: Pick<TestApp, 'databaseUrl'>): Promise<() => Promise<void>> {
  const operator = await operatorConnection(t)
  const sqlite = t.databaseUrl.startsWith('sqlite:')
  await operator.exec(
    sqlite ? 'BEGIN EXCLUSIVE' : 'BEGIN; LOCK TABLE pets, idempotency_keys IN EXCLUSIVE MODE',
  )
  return async () => {
    await operator.exec('ROLLBACK')
    await operator.close()
  }
}

/** A log destination that keeps every line the app writes: `lines` as text, `records()` parsed. */
export function logCapture() {
  const lines: string[] = []
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean))
      done()
    },
  })
  return {
    destination,
    lines,
    records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  }
}
