import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { getPriority, tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import pino from 'pino'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { migrateDatabase } from '../../src/db/migrate.js'
import { createMetrics } from '../../src/http/metrics.js'
import {
  get,
  issueUnlimitedKey,
  killService,
  logLine,
  ROOT,
  type Service,
  spawnService,
  waitUntilHealthy,
} from '../service-process.js'
import { type OtlpReceiver, startOtlpReceiver } from '../tracing/otlp-receiver.js'
import { type Receiver, startReceiver } from './harness.js'

/**
 * The service as `npm start` runs it sends webhooks from a thread of its own
 * (src/webhooks/dispatcher-thread.ts): the thread says so in the log, runs at a lower priority than the
 * rest of the process (Linux: that thread alone), its deliveries arrive and are
 * counted in the main thread's /metrics (its reports), its attempts are spans its own SDK exports, linked
 * to the change that emitted the event, and SIGTERM ends it with the service.
 */

let dir: string
let receiver: Receiver
let collector: OtlpReceiver
let service: Service | undefined

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-thread-'))
  receiver = await startReceiver(() => ({ status: 204 }))
  collector = await startOtlpReceiver()
})
afterEach(async () => {
  if (service) await killService(service)
  service = undefined
  await receiver.close()
  await collector.close()
  rmSync(dir, { recursive: true, force: true })
})

test('deliveries from the dispatcher thread: logged, at a lower priority, counted in /metrics, traced by its own SDK, ended by SIGTERM', async () => {
  const env = {
    DATABASE_URL: `sqlite:${join(dir, 'petstore.sqlite')}`,
    PETSTORE_WEBHOOKS_ALLOW_PRIVATE: '1',
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '50',
  }
  const { key } = await issueUnlimitedKey(env, dir)
  service = await spawnService(env)
  await waitUntilHealthy(service)
  const running = await logLine(
    service,
    (line) => line.msg === 'webhook dispatcher running on a thread of its own',
  )
  expect(running.thread).toBeGreaterThan(0)
  if (process.platform === 'linux') {
    const pid = service.child.pid ?? 0
    const processNice = getPriority(pid)
    const lowered = Math.min(19, processNice + loadConfig({}).webhooks.threadNice)
    expect(running.nice).toBe(lowered)
    const threads = threadNices(pid)
    expect(threads.filter((nice) => nice === lowered)).toHaveLength(1)
    expect(threads.filter((nice) => nice !== processNice)).toHaveLength(1)
  }

  const api = (path: string, body: unknown) =>
    fetch(`http://127.0.0.1:${service?.port}/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
  const subscribed = await api('/webhook_endpoints', {
    url: `http://127.0.0.1:${receiver.port}/hook`,
    events: ['pet.created'],
  })
  expect(subscribed.status).toBe(201)
  expect((await api('/pets', { name: 'Rex', categoryId: 1 })).status).toBe(201)
  const [delivery] = await receiver.waitFor(1)
  expect(JSON.parse(delivery?.body ?? '{}').type).toBe('pet.created')

  const metrics = async () => (await get(service?.port ?? 0, '/metrics')).body
  await expect.poll(metrics).toMatch(/^petstore_webhook_deliveries_total\{outcome="succeeded"\} 1$/m)
  expect(await metrics()).toMatch(/^petstore_webhook_delivery_lag_seconds_count 1$/m)

  const spans = await collector.waitFor((all) => all.some((span) => span.name === 'webhook attempt'))
  const attempt = spans.find((span) => span.name === 'webhook attempt')
  const create = spans.find((span) => span.name === 'POST /v1/pets')
  expect(attempt?.attributes['http.response.status_code']).toBe(204)
  // Linked to the create's trace (the event keeps the context of the span that wrote it).
  expect(create).toBeDefined()
  expect(attempt?.links.map((link) => link.traceId)).toContain(create?.traceId)

  service.child.kill('SIGTERM')
  expect(await service.exited).toBe(0)
})

/** The built module: its worker is started from the built dispatcher-worker.js beside it. */
async function builtThread() {
  const built = pathToFileURL(join(ROOT, 'dist', 'webhooks', 'dispatcher-thread.js')).href
  return (await import(built)) as typeof import('../../src/webhooks/dispatcher-thread.js')
}

test('whenIdle and stop reach the thread: idle once nothing is due, at the configured priority, then stopped, the thread gone', async () => {
  const { startDispatcherThread } = await builtThread()
  const config = loadConfig({
    DATABASE_URL: `sqlite:${join(dir, 'petstore.sqlite')}`,
    LOG_LEVEL: 'silent',
    PETSTORE_WEBHOOK_THREAD_NICE: '3',
  })
  await migrateDatabase(config.database)
  const dispatcher = startDispatcherThread(config, {
    logger: pino({ level: 'silent' }),
    observe: createMetrics().webhooks,
  })
  dispatcher.start()
  await dispatcher.whenIdle()
  if (process.platform === 'linux') {
    const lowered = Math.min(19, getPriority() + 3)
    expect(threadNices(process.pid).filter((nice) => nice === lowered)).toHaveLength(1)
  }
  await dispatcher.stop(1_000)
  await expect(dispatcher.whenIdle()).rejects.toThrow('not running')
})

test('a dispatcher thread that fails is logged and started again, a second later, until the service stops', async () => {
  const { startDispatcherThread } = await builtThread()
  const lines: { msg: string }[] = []
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) })
  // A database the worker cannot open: its folder does not exist.
  const config = loadConfig({ DATABASE_URL: `sqlite:${join(dir, 'missing', 'petstore.sqlite')}` })
  const dispatcher = startDispatcherThread(config, { logger, observe: createMetrics().webhooks })
  dispatcher.start()
  const restarts = () => lines.filter((line) => line.msg.includes('starting it again')).length
  await expect.poll(restarts, { timeout: 10_000 }).toBeGreaterThanOrEqual(2)
  expect(lines.some((line) => line.msg === 'the webhook dispatcher thread failed')).toBe(true)
  await dispatcher.stop(0)
  const after = restarts()
  await new Promise((resolve) => setTimeout(resolve, 1_500))
  expect(restarts()).toBe(after)
})

/** The nice value of each of a process's threads (Linux: the 19th field of /proc/PID/task/TID/stat). */
function threadNices(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
    // After the command's name in parentheses, the fields from the 3rd on.
    return Number(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[16])
  })
}
