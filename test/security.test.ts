import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { operatorConnection, type ServedApp, serveTestApp } from './helpers.js'
import { parseResponse, sendRaw } from './raw-http.js'

/**
 * Security properties as tests. Also covered elsewhere: no plaintext key in the database or the logs
 * (auth.test.ts), no internals in 500 and 503 bodies (errors.test.ts), the generated hostile input
 * (hostile-input.test.ts). `npm audit` on production dependencies runs in .ci/run.
 */

let t: ServedApp
beforeAll(async () => {
  t = await serveTestApp({ env: { PETSTORE_HEADERS_TIMEOUT_MS: '300', PETSTORE_REQUEST_TIMEOUT_MS: '600' } })
})
afterAll(() => t.close())

async function exchange(...chunks: string[]) {
  const reply = parseResponse(await sendRaw(t.port, ...chunks))
  return { ...reply, body: JSON.parse(reply.body) }
}

describe('keys are compared by hash lookup', () => {
  test('a key works only while the hash of it is stored: the plaintext itself is never compared', async () => {
    const key = await t.issueKey()
    const other = `ps_live_${'Q'.repeat(32)}`
    const list = (token: string) =>
      t.app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${token}` } })
    expect((await list(key)).statusCode).toBe(200)
    const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url')
    const operator = await operatorConnection(t)
    await operator.exec(`UPDATE api_keys SET key_hash = '${sha256(other)}' WHERE key_hash = '${sha256(key)}'`)
    await operator.close()
    expect((await list(key)).statusCode).toBe(401)
    expect((await list(other)).statusCode).toBe(200)
  })
})

describe('slow clients cannot hold a connection', () => {
  test('headers that do not arrive in time get 408 request_timeout and the connection is closed', async () => {
    const reply = await exchange('GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Slow: ')
    expect(reply.status).toBe(408)
    expect(reply.body).toMatchObject({ code: 'request_timeout', status: 408 })
  })

  test('a body that does not arrive in time gets 408 and the connection is closed', async () => {
    const key = await t.issueKey()
    const head = `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`
    const reply = await exchange(head, '{"name":')
    expect(reply.status).toBe(408)
    expect(reply.body).toMatchObject({ code: 'request_timeout', status: 408 })
  })
})

// Headers over 16 KiB: request-targets.test.ts.
describe('size limits', () => {
  test.each([
    ['a request line over 16 KiB', `GET /v1/pets?x=${'a'.repeat(17_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431],
    [
      'a body over 64 KiB',
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 70000\r\n\r\n`,
      413,
    ],
  ])('%s is refused with an Error body', async (_case, request, status) => {
    const key = await t.issueKey()
    const reply = await exchange(
      request.replace('Host: x\r\n', `Host: x\r\nAuthorization: Bearer ${key}\r\n`),
    )
    expect(reply.status).toBe(status)
    expect(reply.body).toMatchObject({ status })
    expect(reply.headers['x-content-type-options']).toBe('nosniff')
    expect(reply.headers['cache-control']).toBe('no-store')
  })
})
