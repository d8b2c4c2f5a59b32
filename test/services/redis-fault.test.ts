import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { afterAll, expect, test } from 'vitest'
import { buildTestApp, logCapture, type TestApp } from '../helpers.js'
import { freePort } from '../service-process.js'

/** A Redis of this test's own, on a fixed port, so it can be killed and started again. */
const dir = mkdtempSync(join(tmpdir(), 'petstore-redis-fault-'))
let redis: ChildProcess | undefined
const started: ChildProcess[] = []
let t: TestApp | undefined

async function startRedis(port: number): Promise<void> {
  redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir], {
    stdio: 'ignore',
  })
  started.push(redis)
  for (let attempt = 0; attempt < 100; attempt++) {
    const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => null })
    probe.on('error', () => {})
    try {
      await probe.connect()
      await probe.ping()
      return
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50))
    } finally {
      probe.disconnect()
    }
  }
  throw new Error(`redis-server did not start on port ${port}`)
}

afterAll(async () => {
  await t?.close()
  for (const server of started) server.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})

test('with Redis gone the API keeps answering on per-instance limits, and shares them again once Redis is back', async () => {
  const port = await freePort()
  await startRedis(port)
  t = await buildTestApp({ env: { REDIS_URL: `redis://127.0.0.1:${port}` } })
  const key = await t.issueKey('free')
  const list = () =>
    t?.app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${key}` } })
  expect((await list())?.headers['x-ratelimit-remaining']).toBe('59')

  redis?.kill('SIGKILL')
  await once(redis as ChildProcess, 'exit')
  const during = await list()
  expect(during?.statusCode).toBe(200)
  expect(during?.headers['x-ratelimit-limit']).toBe('60')
  const metrics = await t.app.inject({ method: 'GET', url: '/metrics' })
  expect(metrics.body).toMatch(/petstore_rate_limit_fallbacks_total [1-9]/)

  await startRedis(port)
  let shared = false
  for (let attempt = 0; attempt < 100 && !shared; attempt++) {
    // Redis restarted empty: its count for the key starts again at this request.
    shared = (await list())?.headers['x-ratelimit-remaining'] === '59'
    if (!shared) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  expect(shared).toBe(true)
})

test('with Redis stalled (SIGSTOP) requests are answered on per-instance limits without waiting for it; SIGCONT shares them again', async () => {
  const port = await freePort()
  await startRedis(port)
  const log = logCapture()
  const env = { REDIS_URL: `redis://127.0.0.1:${port}`, PETSTORE_REDIS_TIMEOUT_MS: '100' }
  const stalled = await buildTestApp({ env, logDestination: log.destination })
  try {
    const key = await stalled.issueKey('free')
    const list = () => stalled.app.inject({ method: 'GET', url: '/v1/pets', headers: stalled.auth(key) })
    const readiness = async () => (await stalled.app.inject({ method: 'GET', url: '/readyz' })).json()
    expect((await list()).headers['x-ratelimit-remaining']).toBe('59')
    expect(await readiness()).toEqual({ status: 'ready', rateLimits: 'shared' })

    redis?.kill('SIGSTOP')
    const during = []
    const latencies: number[] = []
    for (let i = 0; i < 10; i++) {
      const started = Date.now()
      during.push(await list())
      latencies.push(Date.now() - started)
    }
    console.info(`Redis stalled, deadline 100 ms: listPets answered in ${latencies.join(', ')} ms`)
    // Three misses of 100 ms each, then no more waiting (before: 10 of 10 got no answer within 6 s).
    expect(latencies.reduce((sum, ms) => sum + ms)).toBeLessThan(2000)
    expect(during.map((response) => response.statusCode)).toEqual(Array(10).fill(200))
    expect(during.at(-1)?.headers['x-ratelimit-limit']).toBe('60')
    expect(await readiness()).toEqual({ status: 'ready', rateLimits: 'per-instance' })
    const metrics = await stalled.app.inject({ method: 'GET', url: '/metrics' })
    expect(metrics.body).toMatch(/petstore_rate_limit_fallbacks_total 1\d/)
    const episodes = log
      .records()
      .filter((line) => String(line.msg).startsWith('rate-limit store unreachable'))
    expect(episodes).toHaveLength(1)

    redis?.kill('SIGCONT')
    let shared = false
    for (let attempt = 0; attempt < 50 && !shared; attempt++) {
      shared = (await readiness()).rateLimits === 'shared'
      if (!shared) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(shared).toBe(true)
    expect((await list()).statusCode).toBe(200)
  } finally {
    redis?.kill('SIGCONT')
    await stalled.close()
  }
})
