import { setTimeout as delay } from 'node:timers/promises'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createPetstoreClient, type PetstoreClientOptions } from '../../client/src/index.js'
import { countPets } from '../helpers.js'
import { failure, recordingFetch, type ServedApp, serveTestApp } from './served-app.js'

let t: ServedApp

beforeEach(async () => {
  t = await serveTestApp()
})

afterEach(async () => {
  await t.close()
})

/**
 * The client's sleep for these tests: it records the wait, lets real time pass so that a client that
 * sent during a wait would be caught doing so, then moves the service's fake clock on by the wait.
 */
function fakeClockSleep(recorder: ReturnType<typeof recordingFetch>, waits: number[]) {
  return async (ms: number) => {
    waits.push(ms)
    recorder.state.waiting++
    await delay(50)
    t.clock.advance(ms)
    recorder.state.waiting--
  }
}

/** A client of the test's key that records what it sends and waits on the service's fake clock. */
function observedClient(apiKey: string, more: Partial<PetstoreClientOptions> = {}) {
  const recorder = recordingFetch()
  const waits: number[] = []
  const client = createPetstoreClient({
    baseUrl: t.baseUrl,
    apiKey,
    fetch: recorder.fetch,
    sleep: fakeClockSleep(recorder, waits),
    now: () => t.clock.now(),
    ...more,
  })
  return { client, recorder, waits }
}

describe('a Free key driven past 60 requests a minute', () => {
  it('answers all 150 calls without a ban, waiting out each Retry-After before anyone sends again', async () => {
    const key = await t.issueKey('free')
    const { client, recorder, waits } = observedClient(key, { random: () => 0.5 })
    const calls = Array.from({ length: 150 }, (_, i) =>
      i % 3 === 0 ? client.createPet({ name: `Pet ${i}`, categoryId: 1 }) : client.listPets({ limit: 1 }),
    )
    const results = await Promise.allSettled(calls)

    expect(results.filter((result) => result.status === 'rejected')).toEqual([])
    expect(await countPets(t)).toBe(50)
    // 150 calls need three windows of 60: one refused request discovers each of the two waits.
    expect(recorder.refusals).toEqual([
      { code: 'rate_limited', retryAfterSeconds: 60 },
      { code: 'rate_limited', retryAfterSeconds: 60 },
    ])
    expect(waits).toHaveLength(2)
    for (const [index, wait] of waits.entries()) {
      expect(wait).toBeGreaterThanOrEqual((recorder.refusals[index]?.retryAfterSeconds ?? Infinity) * 1000)
    }
    expect(recorder.sent.filter((request) => request.duringWait)).toEqual([])
    expect(recorder.sent).toHaveLength(150 + 2)
  })
})

describe('a wait nobody attends', () => {
  it('keeps no timer while no call waits, and a later call waits what is left of it', async () => {
    const key = await t.issueKey('enterprise', { perMinute: 1, perDay: 100 })
    const { client, recorder, waits } = observedClient(key, { random: () => 0.5, maxRetries: 0 })
    await client.listPets()
    const refused = await failure(client.listPets())
    expect(refused).toMatchObject({ code: 'rate_limited', rateLimit: { retryAfter: 60 } })
    expect(waits).toEqual([])

    t.clock.advance(20_000)
    expect(await client.listPets()).toEqual({ pets: [] })
    expect(waits).toEqual([60_000 + 250 - 20_000])
    expect(recorder.sent).toHaveLength(3)
  })
})

describe('when waiting is no use', () => {
  it('stops at key_banned with the ban end, and sends nothing more until it is over', async () => {
    const key = await t.issueKey('enterprise', { perMinute: 1, perDay: 100 })
    const auth = { authorization: `Bearer ${key}` }
    // Another program with the same key: one admitted request, then ten refused ones.
    for (let i = 0; i < 11; i++) await fetch(`${t.baseUrl}/pets`, { headers: auth })
    const { client, recorder } = observedClient(key)
    const banned = await failure(client.listPets())
    const banEnd = t.clock.now() + 900_000
    expect(banned).toMatchObject({ status: 429, code: 'key_banned', requestId: expect.any(String) })
    expect(banned.rateLimit).toEqual({
      limit: 1,
      remaining: 0,
      reset: banEnd / 1000,
      retryAfter: 900,
      retryAt: banEnd,
    })

    t.clock.advance(600_000)
    const held = await failure(client.createPet({ name: 'Rex', categoryId: 1 }))
    expect(held).toMatchObject({
      status: 429,
      code: 'key_banned',
      message: expect.stringMatching(/^not sent: /),
    })
    expect(held.rateLimit).toMatchObject({ retryAfter: 300, retryAt: banEnd })
    expect(recorder.sent).toHaveLength(1)

    t.clock.set(banEnd)
    expect(await client.listPets()).toEqual({ pets: [] })
    expect(recorder.sent).toHaveLength(2)
  })

  it('fails at once when Retry-After is longer than maxRetryAfterMs, and holds every call until then', async () => {
    const key = await t.issueKey('enterprise', { perMinute: 100, perDay: 1 })
    const { client, recorder, waits } = observedClient(key)
    await client.listPets()
    const spent = await failure(client.listPets())
    const midnight = Date.UTC(2027, 0, 2)
    expect(spent).toMatchObject({ status: 429, code: 'rate_limited' })
    expect(spent.rateLimit).toMatchObject({ retryAfter: 86_400, retryAt: midnight })
    const held = await failure(client.listPets())
    expect(held).toMatchObject({ code: 'rate_limited', message: expect.stringMatching(/^not sent: /) })
    expect(waits).toEqual([])
    expect(recorder.sent).toHaveLength(2)
  })
})

describe('a long wait is never silent', () => {
  it('says once per retry, on console.warn by default, how long a 429 makes it wait; onRetry replaces that', async () => {
    const key = await t.issueKey('free')
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    try {
      const { client } = observedClient(key, { random: () => 0.5 })
      await Promise.all(Array.from({ length: 61 }, () => client.listPets({ limit: 1 })))
      const lines = warn.mock.calls.map((call) => String(call[0]))
      expect(lines.length).toBeGreaterThan(0)
      for (const line of lines)
        expect(line).toMatch(/^petstore: rate limited \(429\); waiting \d+ s before sending again$/)
      warn.mockClear()
      const quiet = observedClient(await t.issueKey('free'), { random: () => 0.5, onRetry: () => {} }).client
      await Promise.all(Array.from({ length: 61 }, () => quiet.listPets({ limit: 1 })))
      expect(warn).not.toHaveBeenCalled()
    } finally {
      warn.mockRestore()
    }
  })
})
