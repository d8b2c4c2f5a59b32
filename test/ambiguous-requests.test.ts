import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { countPets, type ServedApp, serveTestApp } from './helpers.js'
import { parseResponse, sendRaw } from './raw-http.js'

/** CONTRACT §12: an ambiguous request is refused, never guessed at, and changes nothing. */

let t: ServedApp
let key: string
let other: string
beforeAll(async () => {
  t = await serveTestApp()
  key = await t.issueKey()
  other = await t.issueKey()
})
afterAll(() => t.close())

const body = JSON.stringify({ name: 'Rex', categoryId: 1 })
const create = (headers: Record<string, string>) =>
  t.app.inject({
    method: 'POST',
    url: '/v1/pets',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    payload: body,
  })

describe('refused as ambiguous, and nothing stored', () => {
  test('two Authorization headers are 400, whichever comes first', async () => {
    const before = await countPets(t)
    for (const [first, second] of [
      [key, other],
      [other, 'nonsense'],
    ]) {
      const response = parseResponse(
        await sendRaw(
          t.port,
          `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${first}\r\n` +
            `Authorization: Bearer ${second}\r\nContent-Type: application/json\r\n` +
            `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
        ),
      )
      expect(response.status).toBe(400)
      expect(JSON.parse(response.body)).toMatchObject({
        code: 'invalid_request',
        message: expect.stringContaining('once'),
      })
      expect(response.headers['x-ratelimit-limit']).toBe('60')
    }
    expect(await countPets(t)).toBe(before)
  })

  test.each(['gzip', 'deflate', 'br', 'gzip, identity'])('Content-Encoding %s is 415', async (encoding) => {
    const before = await countPets(t)
    const response = await create({ 'content-encoding': encoding })
    expect(response.statusCode).toBe(415)
    expect(response.json()).toMatchObject({ code: 'unsupported_media_type' })
    expect(response.json().message).toContain('Content-Encoding')
    expect(await countPets(t)).toBe(before)
  })

  test.each(['latin1', 'ISO-8859-1', 'utf-16', '"windows-1252"'])('charset=%s is 415', async (charset) => {
    const before = await countPets(t)
    const response = await create({ 'content-type': `application/json; charset=${charset}` })
    expect(response.statusCode).toBe(415)
    expect(response.json().message).toContain('UTF-8')
    expect(await countPets(t)).toBe(before)
  })
})

describe('what is not ambiguous still works', () => {
  test.each(['identity', ''])('Content-Encoding %j is the body as sent', async (encoding) => {
    expect((await create({ 'content-encoding': encoding })).statusCode).toBe(201)
  })

  test.each(['utf-8', 'UTF-8', '"utf-8"', 'utf8'])('charset=%s is UTF-8', async (charset) => {
    expect((await create({ 'content-type': `application/json; charset=${charset}` })).statusCode).toBe(201)
  })
})

test('If-Match compares strongly: a tag that only parses to the current version is 412', async () => {
  const created = await create({})
  const { id } = created.json()
  const etag = created.headers.etag as string
  expect(etag).toBe(`"${id}-1"`)
  for (const ifMatch of [`"${id}-01"`, `"${id}-1-x"`, `"0${id}-1"`]) {
    const response = await t.app.inject({
      method: 'PATCH',
      url: `/v1/pets/${id}`,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'if-match': ifMatch },
      payload: { name: 'Changed' },
    })
    expect(response.statusCode, ifMatch).toBe(412)
  }
})

test('a number refused while parsing names its field (§2)', async () => {
  for (const [payload, field] of [
    ['{"name":"x","categoryId":1e300}', 'categoryId'],
    ['{"categoryId":2.5,"name":"x"}', 'categoryId'],
    ['{"name":"a:\\"b","categoryId":9007199254740990.6}', 'categoryId'],
  ] as const) {
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload,
    })
    expect(response.statusCode).toBe(400)
    expect(response.json().message, payload).toMatch(new RegExp(`^${field} must be`))
  }
})
