import type { InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { buildTestApp, type TestApp } from './helpers.js'

/**
 * The operations that take no body (a test event, a DELETE) or only optional fields (a secret rotation, a
 * redelivery): clients that always send `Content-Type: application/json` send them an empty body, and a
 * body sent to one is read as any other. Each answer is one the OpenAPI document lists (CONTRACT §9).
 */
let t: TestApp
let auth: Record<string, string>
let endpointId: string
let eventId: string
beforeAll(async () => {
  t = await buildTestApp()
  auth = t.auth(await t.issueKey())
  const json = { ...auth, 'content-type': 'application/json' }
  await t.app.inject({
    method: 'POST',
    url: '/v1/pets',
    headers: json,
    payload: { name: 'Rex', categoryId: 1 },
  })
  const payload = { url: 'https://8.8.8.8/', events: ['*'] }
  const endpoint = await t.app.inject({
    method: 'POST',
    url: '/v1/webhook_endpoints',
    headers: json,
    payload,
  })
  endpointId = endpoint.json().id
  eventId = (await t.app.inject({ method: 'GET', url: '/v1/events', headers: auth })).json()[0].id
})
afterAll(() => t.close())

const operations = () =>
  ({
    sendTestEvent: ['/webhook_endpoints/{endpointId}/test', `/v1/webhook_endpoints/${endpointId}/test`, 202],
    rotateWebhookSecret: [
      '/webhook_endpoints/{endpointId}/rotate_secret',
      `/v1/webhook_endpoints/${endpointId}/rotate_secret`,
      200,
    ],
    redeliverEvent: ['/events/{eventId}/redeliver', `/v1/events/${eventId}/redeliver`, 202],
  }) as const

async function documentedStatuses(path: string): Promise<string[]> {
  const document = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json()
  return Object.keys(document.paths[path].post.responses)
}

describe.each(['sendTestEvent', 'rotateWebhookSecret', 'redeliverEvent'] as const)('%s', (name) => {
  const post = (headers: Record<string, string>, payload?: string): InjectOptions => ({
    method: 'POST',
    url: operations()[name][1],
    headers: { ...auth, ...headers },
    ...(payload !== undefined && { payload }),
  })

  test('takes an empty body sent as JSON as no body, as it takes no body at all', async () => {
    const success = operations()[name][2]
    expect((await t.app.inject(post({}))).statusCode).toBe(success)
    const empty = await t.app.inject(post({ 'content-type': 'application/json' }, ''))
    expect(empty.statusCode, empty.body).toBe(success)
  })

  test('refuses a body that is not JSON (415) or too large (413), as its OpenAPI entry says', async () => {
    const documented = await documentedStatuses(operations()[name][0])
    const text = await t.app.inject(post({ 'content-type': 'text/plain' }, 'ping'))
    expect(text.statusCode).toBe(415)
    const large = await t.app.inject(post({ 'content-type': 'application/json' }, `"${'x'.repeat(70_000)}"`))
    expect(large.statusCode).toBe(413)
    expect(documented).toEqual(expect.arrayContaining(['413', '415']))
  })
})

test('an operation that needs a body still refuses an empty one', async () => {
  const headers = { ...auth, 'content-type': 'application/json' }
  const empty = await t.app.inject({ method: 'POST', url: '/v1/pets', headers, payload: '' })
  expect(empty.statusCode).toBe(400)
  expect(empty.json().message).toBe('the body must be a JSON object')
})

test('every operation a body can be sent to lists 413 and 415: a DELETE refuses a body that is not JSON', async () => {
  const document = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json()
  type Operation = { operationId: string; responses: object }
  const paths = Object.values(document.paths) as Record<string, Operation>[]
  const operations = paths.flatMap((path) =>
    ['post', 'patch', 'delete'].flatMap((method) => (path[method] ? [path[method]] : [])),
  )
  expect(operations.length).toBeGreaterThan(8)
  for (const { operationId, responses } of operations) {
    expect(Object.keys(responses), operationId).toEqual(expect.arrayContaining(['413', '415']))
  }
  for (const url of ['/v1/pets/424242', '/v1/webhook_endpoints/we_424242']) {
    const headers = { ...auth, 'content-type': 'text/plain' }
    expect((await t.app.inject({ method: 'DELETE', url, headers, payload: 'x' })).statusCode).toBe(415)
  }
})
