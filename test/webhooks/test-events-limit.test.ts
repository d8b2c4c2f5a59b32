import { beforeEach, expect, it } from 'vitest'
import { TEST_EVENTS_PER_MINUTE } from '../../src/webhooks/test-events.js'
import { build, type TestApp } from '../helpers.js'

/**
 * An endpoint takes at most 10 test events a minute (CONTRACT §14): the 11th is a 429 with Retry-After until
 * the minute ends. The app's clock is a fake one, so the minute is exact; no dispatcher runs (the events
 * and their attempts are only written).
 */
let t: TestApp
let key: string
let endpointId: string
beforeEach(async (context) => {
  t = await build(context, { env: { PETSTORE_WEBHOOKS_ALLOW_PRIVATE: '1' } })
  key = await t.issueKey()
  const created = await t.app.inject({
    method: 'POST',
    url: '/v1/webhook_endpoints',
    headers: t.auth(key),
    payload: { url: 'http://127.0.0.1:9/hook', events: ['order.*'] },
  })
  expect(created.statusCode).toBe(201)
  endpointId = created.json().id
})

const sendTest = (id = endpointId, as = key) =>
  t.app.inject({ method: 'POST', url: `/v1/webhook_endpoints/${id}/test`, headers: t.auth(as) })

const pings = async () =>
  (await t.app.inject({ method: 'GET', url: '/v1/events?type=ping&limit=100', headers: t.auth(key) })).json()

it('takes 10 test events a minute, refuses the 11th with 429 and Retry-After, and takes more the next minute', async () => {
  expect(TEST_EVENTS_PER_MINUTE).toBe(10)
  t.clock.advance(15_000)
  for (let i = 0; i < 10; i++) expect((await sendTest()).statusCode).toBe(202)
  // Refused as often as asked, never banned: the refusals are not counted.
  for (let i = 0; i < 15; i++) {
    const refused = await sendTest()
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['retry-after']).toBe('45')
    expect(refused.json()).toMatchObject({
      code: 'rate_limited',
      message: `webhook endpoint ${endpointId} takes at most 10 test events a minute; retry in 45 seconds`,
    })
    // The key's own limits still describe the key.
    expect(Number(refused.headers['x-ratelimit-remaining'])).toBeGreaterThan(1000)
  }
  expect(await pings()).toHaveLength(10)
  t.clock.advance(45_000)
  expect((await sendTest()).statusCode).toBe(202)
  expect(await pings()).toHaveLength(11)
})

it("counts per endpoint, and another account cannot spend an endpoint's test events", async () => {
  const stranger = await t.issueKey()
  for (let i = 0; i < 20; i++) expect((await sendTest(endpointId, stranger)).statusCode).toBe(404)
  const second = await t.app.inject({
    method: 'POST',
    url: '/v1/webhook_endpoints',
    headers: t.auth(key),
    payload: { url: 'http://127.0.0.1:9/other', events: ['*'] },
  })
  for (let i = 0; i < 10; i++) expect((await sendTest()).statusCode).toBe(202)
  expect((await sendTest()).statusCode).toBe(429)
  expect((await sendTest(second.json().id)).statusCode).toBe(202)
})
