import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import type { DestinationStream } from 'pino'
import type { Plan } from '../src/api-keys/api-keys.plans.js'
import { buildApp } from '../src/app.js'
import type { Clock } from '../src/clock.js'
import { loadConfig } from '../src/config.js'
import { createDeps, type Deps } from '../src/deps.js'

export class FakeClock implements Clock {
  constructor(private current = Date.UTC(2027, 0, 1)) {}
  now(): number {
    return this.current
  }
  set(ms: number): void {
    this.current = ms
  }
  advance(ms: number): void {
    this.current += ms
  }
}

const OUT_OF_REACH = { perMinute: 1_000_000_000, perDay: 1_000_000_000 }

export interface TestApp {
  app: FastifyInstance
  deps: Deps
  clock: FakeClock
  dir: string
  /**
   * Issues a key on the app's database and returns it, ready for `Authorization: Bearer`. Without a
   * plan: an Enterprise key whose limits no test reaches, for tests that are not about rate limits.
   */
  issueKey(plan?: Plan, custom?: { perMinute: number; perDay: number }): Promise<string>
  /** `Authorization` and JSON headers for a key. */
  auth(key: string): Record<string, string>
  close(): Promise<void>
}

export interface TestAppOptions {
  env?: Record<string, string>
  logDestination?: DestinationStream
  busyTimeoutMs?: number
}

/** A fresh app on a fresh SQLite file in a temporary folder; close() removes both. */
export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-test-'))
  const config = loadConfig({
    DATABASE_URL: `sqlite:${join(dir, 'petstore.sqlite')}`,
    LOG_LEVEL: options.logDestination ? 'info' : 'silent',
    ...options.env,
  })
  const clock = new FakeClock()
  const deps = await createDeps(config, {
    clock,
    logDestination: options.logDestination,
    busyTimeoutMs: options.busyTimeoutMs,
  })
  const app = await buildApp(deps)
  await app.ready()
  return {
    app,
    deps,
    clock,
    dir,
    issueKey: async (plan = 'enterprise', custom) => {
      const limits = custom ?? (plan === 'enterprise' ? OUT_OF_REACH : {})
      const issued = await deps.apiKeys.issueApiKey({ plan, ...limits })
      return issued.key
    },
    auth: (key) => ({ authorization: `Bearer ${key}` }),
    close: async () => {
      await app.close()
      await deps.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** How many pets the app's database holds: bad requests must leave it unchanged. */
export async function countPets(t: Pick<TestApp, 'deps'>): Promise<number> {
  const row = await t.deps.db
    .selectFrom('pets')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}
