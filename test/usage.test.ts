import { beforeEach, describe, expect, test } from 'vitest'
import { build, type TestApp } from './helpers.js'

/**
 * `GET /v1/usage` (CONTRACT §10, round 4): the calling account's requests per UTC day and status class, the
 * numbers `keys usage` prints, newest day first. On SQLite in `npm test`, on PostgreSQL + Redis in
 * `test:services`. Usage reaches the database when the recorder flushes (every 5 s): the tests flush it.
 */
let t: TestApp
beforeEach(async (context) => {
  t = await build(context)
})

const DAY = 86_400_000
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)
const zeros = { '2xx': 0, '4xx': 0, '429': 0, '5xx': 0 }
const get = (key: string, url: string) => t.app.inject({ method: 'GET', url, headers: t.auth(key) })
const usage = async (key: string, query = '') => {
  await t.deps.usage.flush()
  const response = await get(key, `/v1/usage${query}`)
  expect(response.statusCode).toBe(200)
  return response.json()
}

describe('GET /v1/usage', () => {
  test('answers every day of the range, newest first, zeros included, 30 days by default', async () => {
    const key = await t.issueKey()
    const today = t.clock.now()
    expect(await usage(key, '?days=3')).toEqual([
      { day: dayOf(today), ...zeros },
      { day: dayOf(today - DAY), ...zeros },
      { day: dayOf(today - 2 * DAY), ...zeros },
    ])
    const month = await usage(key)
    expect(month).toHaveLength(30)
    expect(month[0].day).toBe(dayOf(today))
    expect(month[29]).toEqual({ day: dayOf(today - 29 * DAY), ...zeros })
  })

  test('counts by status class per UTC day, 429 apart from the other 4xx, and counts itself like any request', async () => {
    const key = await t.issueKey('enterprise', { perMinute: 5, perDay: 1000 })
    const first = t.clock.now()
    await get(key, '/v1/pets')
    t.clock.advance(DAY)
    for (let i = 0; i < 3; i++) await get(key, '/v1/pets')
    expect((await get(key, '/v1/pets/abc')).statusCode).toBe(400)
    expect((await get(key, '/v1/pets/424242')).statusCode).toBe(404)
    // The minute's 5 are spent: two refusals, which consume nothing.
    for (let i = 0; i < 2; i++) expect((await get(key, '/v1/pets')).statusCode).toBe(429)
    t.clock.advance(60_000)
    const second = t.clock.now()
    expect(await usage(key, '?days=3')).toEqual([
      { day: dayOf(second), '2xx': 3, '4xx': 2, '429': 2, '5xx': 0 },
      { day: dayOf(first), ...zeros, '2xx': 1 },
      { day: dayOf(first - DAY), ...zeros },
    ])
    // The call above is counted (and limited) like any other request.
    expect((await usage(key, '?days=1'))[0]).toMatchObject({ '2xx': 4 })
  })

  test('takes days from 1 to 90', async () => {
    const key = await t.issueKey()
    const one = await get(key, '/v1/usage?days=1')
    // The fields in the contract's order, though "429" is a key JavaScript would put first.
    expect(one.body).toBe(`[{"day":"${dayOf(t.clock.now())}","2xx":0,"4xx":0,"429":0,"5xx":0}]`)
    expect(one.headers['content-type']).toBe('application/json; charset=utf-8')
    const longest = await usage(key, '?days=90')
    expect(longest).toHaveLength(90)
    expect(longest.at(-1).day).toBe(dayOf(t.clock.now() - 89 * DAY))
  })

  test.each(['0', '91', 'abc', '', '2.5', '30&days=30'])(
    'refuses days=%s with 400 invalid_request and the rate-limit headers',
    async (days) => {
      const response = await get(await t.issueKey(), `/v1/usage?days=${days}`)
      expect(response.statusCode).toBe(400)
      const message = days.includes('&')
        ? 'days must be given only once'
        : 'days must be an integer from 1 to 90'
      expect(response.json()).toEqual({
        code: 'invalid_request',
        message,
        status: 400,
        requestId: response.headers['x-request-id'],
      })
      expect(response.headers['x-ratelimit-remaining']).toBeDefined()
    },
  )

  test('is allowed to a read key, and needs a key', async () => {
    const reader = await t.issueKey('free', undefined, 'read')
    await get(reader, '/v1/pets')
    expect(await usage(reader, '?days=1')).toEqual([{ day: dayOf(t.clock.now()), ...zeros, '2xx': 1 }])
    const keyless = await t.app.inject({ method: 'GET', url: '/v1/usage' })
    expect(keyless.statusCode).toBe(401)
    expect(keyless.json()).toMatchObject({ code: 'unauthorized' })
  })

  test("shows the caller's own account only, whichever of its secrets asks", async () => {
    const mine = await t.deps.apiKeys.issueApiKey({ plan: 'pro' })
    const other = await t.issueKey()
    for (let i = 0; i < 4; i++) await get(other, '/v1/pets')
    await get(mine.key, '/v1/pets')
    const rotated = await t.deps.apiKeys.rotateApiKey(mine.apiKey.id, 60_000)
    await get(rotated.key, '/v1/pets/abc')
    const today = { day: dayOf(t.clock.now()), ...zeros, '2xx': 1, '4xx': 1 }
    expect(await usage(mine.key, '?days=1')).toEqual([today])
    // The same account through the new secret: the call above is one more 2xx.
    expect(await usage(rotated.key, '?days=1')).toEqual([{ ...today, '2xx': 2 }])
  })
})
