import fc from 'fast-check'

/**
 * Generated HTTP/1.1 requests, as raw bytes: valid and invalid values from the OpenAPI schemas, deep
 * nesting, huge numbers, `__proto__` and `constructor` keys, invalid UTF-8, NUL bytes, very long and
 * duplicated headers (Host included), ranges and validators, odd methods, the real key where it does not
 * belong; on the API and on every path that needs no key.
 */

export interface GeneratedRequest {
  method: string
  target: string
  headers: [string, string | Buffer][]
  body: Buffer | undefined
}

const STATUSES = ['available', 'pending', 'sold'] as const

const hugeNumber = fc.constantFrom(
  '1e309',
  '-1e309',
  '18446744073709551616',
  '9007199254740993',
  '1.5',
  '-0',
  '0',
)
const weirdString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('__proto__', 'constructor', 'prototype', '\u0000', '', ' ', '%00', '../../etc/passwd'),
)
const jsonValue = fc.oneof(
  weirdString,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 3 }),
)

/** A NewPet the schema accepts. */
export const validNewPet = fc.record(
  {
    name: fc.string({ minLength: 1, maxLength: 60, unit: 'grapheme' }).filter((name) => name.trim() !== ''),
    categoryId: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
    status: fc.constantFrom(...STATUSES),
  },
  { requiredKeys: ['name', 'categoryId'] },
)

/** JSON text that is not a valid NewPet, or not JSON at all. */
const invalidBodyText = fc.oneof(
  validNewPet
    .chain((pet) =>
      fc.oneof(
        fc.constant({ ...pet, id: 5 }),
        fc.record({ name: jsonValue, categoryId: jsonValue, status: jsonValue }, { requiredKeys: [] }),
        fc
          .dictionary(weirdString, jsonValue, { maxKeys: 5 })
          .map((extra) => ({ ...extra, ...pet, extra: 1 })),
      ),
    )
    .map((value) => JSON.stringify(value)),
  validNewPet.map((pet) => JSON.stringify(pet).replace(/"categoryId":\d+/, `"categoryId":1e309`)),
  hugeNumber.map((n) => `{"name":"Rex","categoryId":${n}}`),
  fc.constantFrom(
    '{"__proto__":{"admin":true},"name":"Rex","categoryId":1}',
    '{"constructor":{"prototype":{"x":1}},"name":"Rex","categoryId":1}',
    '{"name":"Rex","categoryId":1,"name":"Max"}',
    '{"name":"Re\\u0000x","categoryId":1}',
    '{"name":"Rex\u0000","categoryId":1}',
    '[]',
    'null',
    '"Rex"',
    '{',
    '',
    `{"name":"${'x'.repeat(70_000)}","categoryId":1}`,
  ),
  fc.integer({ min: 1, max: 20_000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`),
  fc.integer({ min: 1, max: 5_000 }).map((depth) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`),
  fc.string({ maxLength: 200 }),
)

/** Bytes that are not UTF-8 (lone continuation bytes, overlong forms, surrogates), inside JSON. */
const invalidUtf8Body = fc
  .constantFrom([0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xff, 0xfe], [0xf8, 0x88, 0x80, 0x80, 0x80])
  .map((bytes) =>
    Buffer.concat([Buffer.from('{"name":"R'), Buffer.from(bytes), Buffer.from('x","categoryId":1}')]),
  )

/** Bodies of the store's operations: a NewOrder (pets the run made), an OrderChange, or either spoiled. */
const orderBody = fc.oneof(
  fc.record({ petId: fc.integer({ min: 1, max: 300 }) }),
  fc.record({ status: fc.constantFrom('approved', 'delivered', 'cancelled', 'placed', 'sold') }),
  fc.record({ petId: jsonValue }),
  fc.record({ status: jsonValue }),
  fc.record({ petId: fc.integer({ min: 1, max: 300 }), extra: jsonValue }),
)

const bodyChoice = fc.oneof(
  { weight: 4, arbitrary: validNewPet.map((pet) => Buffer.from(JSON.stringify(pet))) },
  { weight: 2, arbitrary: orderBody.map((body) => Buffer.from(JSON.stringify(body))) },
  { weight: 5, arbitrary: invalidBodyText.map((text) => Buffer.from(text)) },
  { weight: 1, arbitrary: invalidUtf8Body },
)

const petId = fc.oneof(
  fc.integer({ min: 1, max: 2_000 }).map(String),
  fc.constantFrom(
    '0',
    '-1',
    '1.5',
    '1e3',
    '9007199254740992',
    '9'.repeat(400),
    '%00',
    '%E0',
    '%2F',
    '__proto__',
    'constructor',
  ),
  weirdString.map(encodeURIComponent),
)

const queryValue = fc.oneof(
  fc.integer({ min: -5, max: 150 }).map(String),
  fc.constantFrom(...STATUSES, 'AVAILABLE', '', '%00', '%FF', 'djE6MTow', 'djE6OTk5OTk5'),
  hugeNumber,
  weirdString.map(encodeURIComponent),
)
const query = fc
  .array(
    fc.tuple(
      fc.constantFrom('limit', 'status', 'cursor', '__proto__', 'constructor', 'x', 'limit[]'),
      queryValue,
    ),
    { maxLength: 4 },
  )
  .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`))

/** Every path that needs no key: the documents, the docs page and its files, the probes, the metrics. */
const keylessPath = fc.constantFrom(
  '/v1/openapi.json',
  '/v1/docs',
  '/v1/docs/',
  '/v1/docs/json',
  '/v1/docs/yaml',
  '/v1/docs/static/index.css',
  '/v1/docs/static/swagger-ui-bundle.js',
  '/v1/docs/static/../../package.json',
  '/v1/docs/static/%2e%2e/%2e%2e/package.json',
  '/v1/docs/static/nope.js',
  '/healthz',
  '/readyz',
  '/metrics',
  '/',
  '/v1',
)

const target = fc.oneof(
  { weight: 5, arbitrary: query.map((q) => `/v1/pets${q}`) },
  { weight: 4, arbitrary: petId.map((id) => `/v1/pets/${id}`) },
  { weight: 2, arbitrary: fc.tuple(keylessPath, query).map(([path, q]) => `${path}${q}`) },
  // The key's standing and the store (CONTRACT §10, §11): every method, odd queries and ids.
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.constantFrom('/v1/rate_limit', '/v1/store/orders', '/v1/store/inventory', '/v1/store/'),
        query,
      )
      .map(([path, q]) => `${path}${q}`),
  },
  { weight: 1, arbitrary: petId.map((id) => `/v1/store/orders/${id}`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '/v1/pets/',
      '/v1/pets/1/x',
      '/v1/',
      '/v1/PETS',
      '//v1/pets',
      '/v1/pets/../pets',
      '*',
      '/v1/pets?limit=1&limit=2',
      '/%',
    ),
  },
)

const method = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('GET', 'POST') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'HEAD',
      'PUT',
      'DELETE',
      'PATCH',
      'OPTIONS',
      'TRACE',
      'PROPFIND',
      'FOO',
      'get',
      'M-SEARCH',
    ),
  },
)

/** A header value: usually plain, sometimes long, NUL-bearing or not UTF-8. */
const headerValue = fc.oneof(
  { weight: 6, arbitrary: fc.string({ maxLength: 40 }).map((s) => s.replace(/[\r\n]/g, ' ')) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 20_000 }).map((n) => 'v'.repeat(n)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<string | Buffer>('a\u0000b', Buffer.from([0x61, 0xff, 0xfe]), '\u00e9t\u00e9'),
  },
)

export function generatedRequest(apiKey: string): fc.Arbitrary<GeneratedRequest> {
  const authorization = fc.oneof(
    { weight: 8, arbitrary: fc.constant(`Bearer ${apiKey}`) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '',
        'Bearer',
        `Basic ${apiKey}`,
        `Bearer ps_live_${'A'.repeat(32)}`,
        `bearer  ${apiKey}`,
        `Bearer ${apiKey}x`,
      ),
    },
  )
  const contentType = fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'APPLICATION/JSON',
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/json; charset=latin1',
    '',
  )
  const extraHeaders = fc.array(
    fc.tuple(
      fc.constantFrom(
        'x-request-id',
        'idempotency-key',
        'accept',
        'x-forwarded-for',
        'authorization',
        'content-type',
        'x-custom',
        '__proto__',
        'range',
        'if-match',
        'if-none-match',
        'x-forwarded-host',
        'x-forwarded-proto',
        'host',
      ),
      headerValue,
    ),
    { maxLength: 3 },
  )
  const generic = fc
    .record({
      method,
      target,
      authorization,
      contentType,
      extraHeaders,
      body: bodyChoice,
      hasBody: fc.boolean(),
    })
    .map(({ method, target, authorization, contentType, extraHeaders, body, hasBody }) => {
      const sendsBody = method === 'POST' || (hasBody && method !== 'GET' && method !== 'HEAD')
      const headers: [string, string | Buffer][] = [['Host', 'petstore.test']]
      if (authorization) headers.push(['Authorization', authorization])
      if (sendsBody && contentType) headers.push(['Content-Type', contentType])
      headers.push(...extraHeaders)
      return { method, target, headers, body: sendsBody ? body : undefined }
    })
  // Well-formed store operations now and then, so that orders are really placed, moved and cancelled, and
  // their pets' statuses are fought over.
  const json = (value: unknown) => Buffer.from(JSON.stringify(value))
  const storeHeaders: [string, string][] = [
    ['Host', 'petstore.test'],
    ['Authorization', `Bearer ${apiKey}`],
    ['Content-Type', 'application/json'],
  ]
  const store = fc.oneof(
    fc.integer({ min: 1, max: 120 }).map((petId) => ({
      method: 'POST',
      target: '/v1/store/orders',
      headers: storeHeaders,
      body: json({ petId }),
    })),
    fc
      .tuple(fc.integer({ min: 1, max: 100 }), fc.constantFrom('approved', 'delivered', 'cancelled'))
      .map(([id, status]) => ({
        method: 'PATCH',
        target: `/v1/store/orders/${id}`,
        headers: storeHeaders,
        body: json({ status }),
      })),
    // A status set on a pet, whether or not an order holds it (then only the order may move it: 409).
    fc
      .tuple(fc.integer({ min: 1, max: 120 }), fc.constantFrom('available', 'pending', 'sold', null))
      .map(([id, status]) => ({
        method: 'PATCH',
        target: `/v1/pets/${id}`,
        headers: storeHeaders,
        body: json({ status }),
      })),
  )
  return fc.oneof(
    { weight: 19, arbitrary: generic },
    { weight: 2, arbitrary: store },
    { weight: 1, arbitrary: misplacedKey(apiKey) },
  )
}

/**
 * The real key where it never authenticates, in each spelling CONTRACT §12 names: any query parameter
 * (percent-encoded or not), the path, User-Agent, X-Request-Id. It must never be echoed or logged.
 */
function misplacedKey(apiKey: string): fc.Arbitrary<GeneratedRequest> {
  const encoded = apiKey.replaceAll('_', '%5F')
  const placements = fc.constantFrom<[string, [string, string][]]>(
    [`/v1/pets?api%5Fkey=${apiKey}`, []],
    [`/v1/pets?limit=1;api_key=${apiKey}`, []],
    [`/v1/pets?a=${apiKey}`, []],
    [`/v1/pets?a=${encoded}`, []],
    [`/v1/pets?access_token%3D${apiKey}`, []],
    [`/v1/pets/${apiKey}`, []],
    [`/v1/${apiKey}`, []],
    [`/v1/${encoded}`, []],
    ['/v1/pets', [['User-Agent', `shop-sync/2 ${apiKey}`]]],
    ['/v1/pets', [['X-Request-Id', apiKey]]],
  )
  return fc
    .tuple(placements, fc.constantFrom('GET', 'HEAD'), fc.boolean())
    .map(([[target, extra], method, authenticated]) => {
      const headers: [string, string][] = [['Host', 'petstore.test'], ...extra]
      if (authenticated) headers.push(['Authorization', `Bearer ${apiKey}`])
      return { method, target, headers, body: undefined }
    })
}

/**
 * One request on its own connection, or (one time in five) 2 to 4 pipelined on one: GETs and HEADs of any
 * route, then any request. Bodiless ones first, so no body can be read as another request.
 */
export function generatedBatch(apiKey: string): fc.Arbitrary<GeneratedRequest[]> {
  const request = generatedRequest(apiKey)
  // Safe methods only before the last: Node drops a connection whose later request is malformed before
  // the earlier responses are written, and a lost answer must not be a change the test cannot see.
  const bodiless = request.filter((generated) => generated.method === 'GET' || generated.method === 'HEAD')
  const pipelined = fc
    .tuple(fc.array(bodiless, { minLength: 1, maxLength: 3 }), request)
    .map(([first, last]) => [...first, last])
  return fc.oneof({ weight: 4, arbitrary: request.map((one) => [one]) }, { weight: 1, arbitrary: pipelined })
}

/** The requests as bytes on one connection, each with a correct Content-Length; the last says Connection: close. */
export function batchBytes(requests: readonly GeneratedRequest[]): Buffer {
  return Buffer.concat(requests.map((request, index) => toBytes(request, index === requests.length - 1)))
}

/** The request as bytes on the wire, with a correct Content-Length, and `Connection: close` if `last`. */
export function toBytes(request: GeneratedRequest, last = true): Buffer {
  const lines: (string | Buffer)[] = [`${request.method} ${request.target} HTTP/1.1\r\n`]
  for (const [name, value] of request.headers) lines.push(`${name}: `, value, '\r\n')
  if (request.body) lines.push(`Content-Length: ${request.body.length}\r\n`)
  lines.push(last ? 'Connection: close\r\n\r\n' : '\r\n')
  if (request.body) lines.push(request.body)
  return Buffer.concat(lines.map((part) => (typeof part === 'string' ? Buffer.from(part) : part)))
}
