import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createPetstoreClient, type RetryNotice } from '../../client/src/index.js'
import { failure, type ServedApp, serveTestApp } from './served-app.js'

let t: ServedApp

beforeEach(async () => {
  t = await serveTestApp()
})

afterEach(async () => {
  await t.close()
})

/** A client on the service's fake clock that records what onRetry is told and what it then sleeps. */
function noticingClient(apiKey: string, fetch?: (input: string, init: RequestInit) => Promise<Response>) {
  const notices: RetryNotice[] = []
  const waits: number[] = []
  const client = createPetstoreClient({
    baseUrl: t.baseUrl,
    apiKey,
    random: () => 0.5,
    now: () => t.clock.now(),
    sleep: async (ms) => {
      waits.push(ms)
      t.clock.advance(ms)
    },
    onRetry: (notice) => notices.push(notice),
    ...(fetch ? { fetch } : {}),
  })
  return { client, notices, waits }
}

describe('onRetry', () => {
  it('is told the 429, its Retry-After and the shared wait before the client waits it out', async () => {
    const key = await t.issueKey('enterprise', { perMinute: 1, perDay: 100 })
    const { client, notices, waits } = noticingClient(key)
    await client.listPets()
    expect(notices).toEqual([])

    expect(await client.listPets()).toEqual({ pets: [] })
    // Retry-After 60 s plus the first backoff step, 0.5 × 500 ms.
    expect(waits).toEqual([60_250])
    expect(notices).toEqual([{ error: expect.anything(), delayMs: 60_250, retry: 1 }])
    expect(notices[0]?.error).toMatchObject({
      status: 429,
      code: 'rate_limited',
      rateLimit: { retryAfter: 60 },
    })
  })

  it('is told each network error with the backoff it sleeps, and nothing when the call is not retried', async () => {
    const key = await t.issueKey()
    let failures = 2
    const flaky = (input: string, init: RequestInit) =>
      failures-- > 0 ? Promise.reject(new TypeError('fetch failed')) : globalThis.fetch(input, init)
    const { client, notices, waits } = noticingClient(key, flaky)
    expect(await client.listPets()).toEqual({ pets: [] })
    expect(waits).toEqual([250, 500])
    expect(notices.map(({ error, delayMs, retry }) => ({ code: error.code, delayMs, retry }))).toEqual([
      { code: 'network_error', delayMs: 250, retry: 1 },
      { code: 'network_error', delayMs: 500, retry: 2 },
    ])

    expect(await failure(client.createPet({ name: ' ', categoryId: 1 }))).toMatchObject({ status: 400 })
    expect(notices).toHaveLength(2)
  })
})
