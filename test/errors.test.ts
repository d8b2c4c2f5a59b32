import type { InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { buildTestApp, countPets, lockPets, type TestApp } from './helpers.js'

let t: TestApp
let key: string
beforeAll(async () => {
  t = await buildTestApp()
  key = await t.issueKey()
})
afterAll(() => t.close())

const petCount = () => countPets(t)

/** Sends the request and checks the contract's Error body; returns the response for further checks. */
async function expectError(options: InjectOptions, status: number, code: string) {
  const response = await t.app.inject(options)
  expect(response.statusCode).toBe(status)
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
  const body = response.json()
  expect(body).toEqual({
    code,
    message: expect.any(String),
    status,
    requestId: response.headers['x-request-id'],
  })
  expect(body.message.length).toBeGreaterThan(10)
  return response
}

function post(payload: unknown, headers: Record<string, string> = {}): InjectOptions {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload)
  return {
    method: 'POST',
    url: '/v1/pets',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    payload: body,
  }
}

describe('createPet refuses bad bodies with 400 invalid_request and stores nothing', () => {
  const cases: [string, unknown][] = [
    ['malformed JSON', '{"name": "Rex",'],
    ['an array body', '[{"name":"Rex","categoryId":1}]'],
    ['a string body', '"Rex"'],
    ['a number body', '42'],
    ['null body', 'null'],
    ['an empty body', ''],
    ['categoryId as "5"', { name: 'Rex', categoryId: '5' }],
    ['categoryId 1.5', { name: 'Rex', categoryId: 1.5 }],
    ['categoryId 0', { name: 'Rex', categoryId: 0 }],
    ['categoryId -1', { name: 'Rex', categoryId: -1 }],
    ['categoryId 2^53', '{"name":"Rex","categoryId":9007199254740992}'],
    ['categoryId 1e300', '{"name":"Rex","categoryId":1e300}'],
    ['categoryId 1e400', '{"name":"Rex","categoryId":1e400}'],
    [
      'categoryId 9007199254740990.6 (parses as a whole number)',
      '{"name":"Rex","categoryId":9007199254740990.6}',
    ],
    ['categoryId 1.0000000000000001 (parses as 1)', '{"name":"Rex","categoryId":1.0000000000000001}'],
    ['categoryId 1e-400 (parses as 0)', '{"name":"Rex","categoryId":1e-400}'],
    ['categoryId 2.00000000000000001e1 (parses as 20)', '{"name":"Rex","categoryId":2.00000000000000001e1}'],
    ['categoryId null', { name: 'Rex', categoryId: null }],
    ['a missing name', { categoryId: 1 }],
    ['a missing categoryId', { name: 'Rex' }],
    ['a 10,000-character name', { name: 'x'.repeat(10_000), categoryId: 1 }],
    ['a 101-character name', { name: 'x'.repeat(101), categoryId: 1 }],
    ['a name of spaces', { name: '     ', categoryId: 1 }],
    ['an empty name', { name: '', categoryId: 1 }],
    ['a name with a control character', { name: 'Re\u0007x', categoryId: 1 }],
    ['a name with DEL', { name: 'Re\u007fx', categoryId: 1 }],
    ['a name with a C1 control', { name: 'Re\u0085x', categoryId: 1 }],
    ['a name with a lone surrogate', '{"name":"Re\\ud800x","categoryId":1}'],
    ['name null', { name: null, categoryId: 1 }],
    ['name as a number', { name: 5, categoryId: 1 }],
    ['status Sold', { name: 'Rex', categoryId: 1, status: 'Sold' }],
    ['status null', { name: 'Rex', categoryId: 1, status: null }],
    ['an unknown field', { name: 'Rex', categoryId: 1, colour: 'brown' }],
    ['a __proto__ key', '{"name":"Rex","categoryId":1,"__proto__":{"admin":true}}'],
    ['a constructor key', '{"name":"Rex","categoryId":1,"constructor":{"prototype":{"admin":true}}}'],
    ['a nested __proto__', '{"name":{"__proto__":{"x":1}},"categoryId":1}'],
  ]
  test.each(cases)('%s', async (_label, payload) => {
    const before = await petCount()
    await expectError(post(payload), 400, 'invalid_request')
    expect(await petCount()).toBe(before)
  })

  test('messages name the field and the rule', async () => {
    const categoryId = await t.app.inject(post({ name: 'Rex', categoryId: '5' }))
    expect(categoryId.json().message).toBe('categoryId must be an integer from 1 to 9007199254740991')
    const unknown = await t.app.inject(post({ name: 'Rex', categoryId: 1, colour: 'brown' }))
    expect(unknown.json().message).toContain('"colour"')
    const missing = await t.app.inject(post({ categoryId: 1 }))
    expect(missing.json().message).toBe('name is required')
    const surrogate = await t.app.inject(post('{"name":"Re\\ud800x","categoryId":1}'))
    expect(surrogate.json().message).toBe('name must be valid Unicode (no lone surrogates)')
  })

  test.each([
    ['1.0', 1],
    ['1e3', 1000],
    ['10e-1', 1],
    ['2.50e1', 25],
    ['9007199254740991.000', 9007199254740991],
  ])('categoryId %s is exactly a whole number and is stored as %d', async (literal, stored) => {
    const response = await t.app.inject(post(`{"name":"Exact ${literal}","categoryId":${literal}}`))
    expect(response.statusCode).toBe(201)
    expect(response.json().categoryId).toBe(stored)
  })

  test('digits and dots inside strings are not numbers', async () => {
    const response = await t.app.inject(post('{"name":"R2.5e \\"1.0000000000000001\\"","categoryId":7}'))
    expect(response.statusCode).toBe(201)
  })

  test('a body that is not valid UTF-8 is 400, never stored as U+FFFD', async () => {
    const before = await petCount()
    const body = Buffer.concat([
      Buffer.from('{"name":"Re'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('x","categoryId":1}'),
    ])
    const response = await expectError({ ...post(''), payload: body }, 400, 'invalid_request')
    expect(response.json().message).toBe('the body is not valid UTF-8')
    expect(await petCount()).toBe(before)
  })

  test('a POST with neither body nor Content-Type is 400', async () => {
    await expectError(
      { method: 'POST', url: '/v1/pets', headers: { authorization: `Bearer ${key}` } },
      400,
      'invalid_request',
    )
  })
})

describe('listPets and getPet refuse bad parameters with 400 invalid_request', () => {
  test.each([
    'limit=0',
    'limit=101',
    'limit=-1',
    'limit=2.5',
    'limit=abc',
    'limit=5abc',
    'limit=0x10',
    'limit=%205',
    'limit=',
    'limit=1&limit=2',
    'status=Sold',
    'status=',
    'status=available&status=sold',
    'cursor=abc',
    'cursor=',
  ])('GET /v1/pets?%s', async (query) => {
    await expectError(
      { method: 'GET', url: `/v1/pets?${query}`, headers: { authorization: `Bearer ${key}` } },
      400,
      'invalid_request',
    )
  })

  test.each(['abc', '0', '-1', '1.5', '99999999999999999999', '9007199254740992', '1e3', '%20'])(
    'GET /v1/pets/%s',
    async (petId) => {
      const response = await expectError(
        { method: 'GET', url: `/v1/pets/${petId}`, headers: { authorization: `Bearer ${key}` } },
        400,
        'invalid_request',
      )
      expect(response.json().message).toBe('petId must be an integer from 1 to 9007199254740991')
    },
  )

  test('unknown query parameters are ignored', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/v1/pets?colour=brown',
      headers: { authorization: `Bearer ${key}` },
    })
    expect(response.statusCode).toBe(200)
  })
})

describe('the other rows of the error table', () => {
  test('a well-formed id that names no pet is 404 not_found', async () => {
    await expectError(
      { method: 'GET', url: '/v1/pets/9007199254740991', headers: { authorization: `Bearer ${key}` } },
      404,
      'not_found',
    )
  })

  test('an unknown route is 404 not_found; under /v1 it needs a key first, like every API request', async () => {
    await expectError({ method: 'GET', url: '/v1/stores' }, 401, 'unauthorized')
    const auth = { authorization: `Bearer ${key}` }
    await expectError({ method: 'GET', url: '/v1/stores', headers: auth }, 404, 'not_found')
    await expectError({ method: 'GET', url: '/nothing/here' }, 404, 'not_found')
  })

  test.each([
    ['PUT', '/v1/pets/1', 'GET, HEAD, PATCH, DELETE'],
    ['POST', '/v1/pets/1', 'GET, HEAD, PATCH, DELETE'],
    ['DELETE', '/v1/pets', 'GET, HEAD, POST'],
    ['PATCH', '/v1/pets', 'GET, HEAD, POST'],
    ['OPTIONS', '/v1/pets', 'GET, HEAD, POST'],
  ] as const)('%s %s is 405 method_not_allowed with Allow: %s', async (method, url, allow) => {
    const response = await expectError(
      { method, url, headers: { authorization: `Bearer ${key}` } },
      405,
      'method_not_allowed',
    )
    expect(response.headers.allow).toBe(allow)
  })

  test('a body over 64 KiB is 413 payload_too_large and stores nothing', async () => {
    const before = await petCount()
    await expectError(
      post({ name: 'Rex', categoryId: 1, pad: 'x'.repeat(70 * 1024) }),
      413,
      'payload_too_large',
    )
    expect(await petCount()).toBe(before)
  })

  test.each([
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/xml',
    'multipart/form-data; boundary=x',
  ])('Content-Type %s is 415 unsupported_media_type', async (contentType) => {
    await expectError(
      post('{"name":"Rex","categoryId":1}', { 'content-type': contentType }),
      415,
      'unsupported_media_type',
    )
  })

  test('application/json with a charset parameter is accepted', async () => {
    const response = await t.app.inject(
      post({ name: 'Rex', categoryId: 1 }, { 'content-type': 'application/json; charset=utf-8' }),
    )
    expect(response.statusCode).toBe(201)
  })

  test('an unexpected failure is 500 internal_error with no internals in the body', async () => {
    const failing = await buildTestApp()
    try {
      const failingKey = await failing.issueKey()
      await failing.deps.database.db.schema.dropTable('idempotency_keys').execute()
      await failing.deps.database.db.schema.dropTable('orders').execute()
      await failing.deps.database.db.schema.dropTable('pets').execute()
      const response = await failing.app.inject({
        method: 'GET',
        url: '/v1/pets',
        headers: { authorization: `Bearer ${failingKey}` },
      })
      expect(response.statusCode).toBe(500)
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
      const body = response.json()
      expect(body).toEqual({
        code: 'internal_error',
        message: expect.any(String),
        status: 500,
        requestId: expect.any(String),
      })
      expect(response.body).not.toMatch(/pets|sqlite|select|at \/|\.ts|\.js/i)
    } finally {
      await failing.close()
    }
  })

  test('a database locked by another process is 503 unavailable with Retry-After, then recovers', async () => {
    // A deadline the locked write must run into, and that the key's insert before it and the write after
    // the release meet on a loaded machine (at 50 ms, PostgreSQL's insert of the key once ran out of it).
    const locked = await buildTestApp({ env: { PETSTORE_DB_TIMEOUT_MS: '1000' } })
    let release: (() => Promise<void>) | undefined
    try {
      const lockedKey = await locked.issueKey()
      release = await lockPets(locked)
      const createRex = () =>
        locked.app.inject({
          method: 'POST',
          url: '/v1/pets',
          headers: { authorization: `Bearer ${lockedKey}`, 'content-type': 'application/json' },
          payload: { name: 'Rex', categoryId: 1 },
        })
      const response = await createRex()
      expect(response.statusCode).toBe(503)
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(response.json()).toMatchObject({ code: 'unavailable', status: 503 })
      expect(response.headers['retry-after']).toBe('1')
      await release()
      release = undefined
      expect((await createRex()).statusCode).toBe(201)
    } finally {
      await release?.()
      await locked.close()
    }
  })
})

describe('messages a person can act on, and one verdict whatever is cached', () => {
  const auth = () => ({ authorization: `Bearer ${key}` })

  test('an empty cursor is 400 before and after the first page was cached', async () => {
    const before = await t.app.inject({ method: 'GET', url: '/v1/pets?cursor=', headers: auth() })
    expect(before.statusCode).toBe(400)
    expect((await t.app.inject({ method: 'GET', url: '/v1/pets', headers: auth() })).statusCode).toBe(200)
    const after = await t.app.inject({ method: 'GET', url: '/v1/pets?cursor=', headers: auth() })
    expect(after.statusCode).toBe(400)
    expect(after.json().message).toBe(before.json().message)
  })

  test('an empty patch says it is empty and what to send', async () => {
    const response = await t.app.inject({
      method: 'PATCH',
      url: '/v1/pets/1',
      headers: { ...auth(), 'content-type': 'application/json' },
      payload: {},
    })
    expect(response.statusCode).toBe(400)
    expect(response.json().message).toBe('the body is empty: send at least one of name, categoryId, status')
  })

  test.each(['0', '1,,2', 'x', `${'1,'.repeat(100)}1`])(
    '?id=%s says what id must be, in words',
    async (id) => {
      const response = await t.app.inject({ method: 'GET', url: `/v1/pets?id=${id}`, headers: auth() })
      expect(response.statusCode).toBe(400)
      expect(response.json().message).toBe(
        'id must be 1 to 100 ids from 1 to 9007199254740991, separated by commas (id=1,2,3)',
      )
    },
  )
})
