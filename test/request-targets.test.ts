import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type ServedApp, serveTestApp } from './helpers.js'
import { parseResponse, sendRaw } from './raw-http.js'

let t: ServedApp
let key: string
beforeAll(async () => {
  t = await serveTestApp()
  key = await t.issueKey()
  await t.deps.pets.createPet({ apiKeyId: 1, newPet: { name: 'Secret Rex', categoryId: 1 } })
})
afterAll(() => t.close())

/** A raw request's first response, with its JSON body parsed. */
async function exchange(text: string) {
  const reply = parseResponse(await sendRaw(t.port, text))
  return { ...reply, body: JSON.parse(reply.body) }
}

describe('every spelling of an API path needs a key', () => {
  test.each(['/v1/%70ets', '/v1/pet%73/1', '/v1/pets#x', 'http://shop.example/v1/pets', '/v1/pets%2F1'])(
    'GET %s without a key is 401 with the rate-limit headers',
    async (target) => {
      const response = await exchange(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
      expect(response.status).toBe(401)
      expect(response.body).toMatchObject({ code: 'unauthorized', status: 401 })
      expect(response.headers['x-ratelimit-limit']).toBe('60')
      expect(response.headers['cache-control']).toBe('no-store')
    },
  )

  test('with a key, the encoded spelling is the same resource', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/v1/%70ets',
      headers: { authorization: `Bearer ${key}` },
    })
    expect(response.statusCode).toBe(200)
    expect(response.json()[0].name).toBe('Secret Rex')
  })

  test('an encoded slash is not a route: 404, not 405', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/v1/pets%2F1',
      headers: { authorization: `Bearer ${key}` },
    })
    expect(response.statusCode).toBe(404)
  })
})

describe('requests the router or the HTTP parser refuse still get the Error body', () => {
  test('a URL that does not percent-decode is 400 invalid_request', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/v1/pets/%E0',
      headers: { authorization: `Bearer ${key}` },
    })
    expect(response.statusCode).toBe(400)
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(response.json()).toEqual({
      code: 'invalid_request',
      message: expect.stringContaining('percent-encoding'),
      status: 400,
      requestId: response.headers['x-request-id'],
    })
  })

  test('a 600-digit petId is a 400 about petId, not 414', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: `/v1/pets/${'9'.repeat(600)}`,
      headers: { authorization: `Bearer ${key}` },
    })
    expect(response.statusCode).toBe(400)
    expect(response.json().message).toBe('petId must be an integer from 1 to 9007199254740991')
  })

  test('a request that is not HTTP is 400 invalid_request', async () => {
    const response = await exchange('FOO /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n')
    expect(response.status).toBe(400)
    expect(response.body).toMatchObject({ code: 'invalid_request', status: 400 })
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
  })

  test('headers over the limit are 431 header_too_large', async () => {
    const response = await exchange(
      `GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    )
    expect(response.status).toBe(431)
    expect(response.body).toMatchObject({ code: 'header_too_large', status: 431 })
    expect(response.body.requestId).toMatch(/^[0-9a-f-]{36}$/)
  })
})
