import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { buildTestApp, logCapture, type TestApp } from './helpers.js'

let t: TestApp
let key: string
const { destination: logDestination, lines: logLines } = logCapture()
beforeAll(async () => {
  t = await buildTestApp({ logDestination })
  key = await t.issueKey()
})
afterAll(() => t.close())

async function expectUnauthorized(authorization: string | undefined, messagePart: string, url = '/v1/pets') {
  const response = await t.app.inject({
    method: 'GET',
    url,
    headers: authorization === undefined ? {} : { authorization },
  })
  expect(response.statusCode).toBe(401)
  expect(response.headers['www-authenticate']).toMatch(/^Bearer/)
  expect(response.headers['cache-control']).toBe('no-store')
  expect(response.json()).toMatchObject({ code: 'unauthorized', status: 401 })
  expect(response.json().message).toContain(messagePart)
  return response
}

describe('bearer authentication', () => {
  test('a missing Authorization header is 401 with a plain Bearer challenge', async () => {
    const response = await expectUnauthorized(undefined, 'API key is required')
    expect(response.headers['www-authenticate']).toBe('Bearer')
  })

  test('another scheme, an empty token and a malformed key are 401', async () => {
    await expectUnauthorized(`Basic ${Buffer.from('user:pass').toString('base64')}`, 'Bearer scheme')
    await expectUnauthorized('Bearer', 'Bearer scheme')
    await expectUnauthorized('Bearer ', 'Bearer scheme')
    await expectUnauthorized('Bearer not-a-key', 'malformed')
    await expectUnauthorized(`Bearer ${key}x`, 'malformed')
  })

  test('a well-formed key that was never issued is 401', async () => {
    await expectUnauthorized(`Bearer ps_live_${'A'.repeat(32)}`, 'not valid')
  })

  test('the scheme name is case-insensitive', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/v1/pets',
      headers: { authorization: `bearer ${key}` },
    })
    expect(response.statusCode).toBe(200)
  })

  test('a key of the other environment is 401 with a message naming its environment', async () => {
    const staging = await buildTestApp({ env: { PETSTORE_ENV: 'staging' } })
    try {
      const stagingKey = await staging.issueKey()
      expect(stagingKey).toMatch(/^ps_test_/)
      await expectUnauthorized(`Bearer ${stagingKey}`, 'belongs to the staging environment')
      const response = await staging.app.inject({
        method: 'GET',
        url: '/v1/pets',
        headers: { authorization: `Bearer ${key}` },
      })
      expect(response.statusCode).toBe(401)
      expect(response.json().message).toContain('belongs to the production environment')
    } finally {
      await staging.close()
    }
  })

  test('a revoked key is refused from the next request on', async () => {
    const doomed = await t.issueKey()
    const headers = { authorization: `Bearer ${doomed}` }
    expect((await t.app.inject({ method: 'GET', url: '/v1/pets', headers })).statusCode).toBe(200)
    const [issued] = (await t.deps.apiKeys.listApiKeys()).slice(-1)
    await t.deps.apiKeys.revokeApiKey(issued?.id ?? 0)
    await expectUnauthorized(`Bearer ${doomed}`, 'revoked')
  })

  test.each([
    ['POST', '/v1/pets'],
    ['GET', '/v1/pets/1'],
    ['DELETE', '/v1/pets/1'],
    ['GET', '/v1/pets/1/owner'],
  ] as const)('%s %s needs a key too', async (method, url) => {
    const response = await t.app.inject({ method, url })
    expect(response.statusCode).toBe(401)
  })

  test('the docs, the OpenAPI document and the probes need no key', async () => {
    for (const url of ['/v1/openapi.json', '/v1/docs', '/healthz', '/readyz', '/metrics']) {
      const response = await t.app.inject({ method: 'GET', url })
      expect(response.statusCode, url).toBeLessThan(400)
    }
  })
})

describe('secrets', () => {
  test('keys never appear in the logs, not even for failed requests', async () => {
    const revoked = await t.issueKey()
    const [issued] = (await t.deps.apiKeys.listApiKeys()).slice(-1)
    await t.deps.apiKeys.revokeApiKey(issued?.id ?? 0)
    for (const token of [key, revoked, `ps_live_${'B'.repeat(32)}`]) {
      await t.app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${token}` } })
      await t.app.inject({
        method: 'POST',
        url: '/v1/pets',
        headers: { authorization: `Bearer ${token}` },
        payload: '{',
      })
      t.deps.logger.info({ headers: { authorization: `Bearer ${token}` } }, 'a careless log line')
    }
    const logs = logLines.join('')
    expect(logs).toContain('request completed')
    expect(logs).toContain('[redacted]')
    for (const token of [key, revoked]) expect(logs).not.toContain(token)
    expect(logs).not.toContain('B'.repeat(32))
  })

  test('the database holds only hashes of keys', async () => {
    const rows = await t.deps.database.db.selectFrom('api_keys').selectAll().execute()
    expect(JSON.stringify(rows)).not.toContain(key)
    expect(JSON.stringify(rows)).not.toContain(key.slice(12))
  })
})
