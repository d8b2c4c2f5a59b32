import SwaggerParser from '@apidevtools/swagger-parser'
import type { InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { GET_PET_SUNSET_AT } from '../src/pets/pets.deprecation.js'
import { buildTestApp, lockPets, type TestApp } from './helpers.js'

type Operation = {
  deprecated?: boolean
  operationId: string
  responses: Record<string, unknown>
  'x-stability'?: string
}
type Document = {
  openapi: string
  servers: { url: string; description: string }[]
  security: unknown[]
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> }
  paths: Record<string, Record<string, Operation>>
}

let t: TestApp
let document: Document
beforeAll(async () => {
  t = await buildTestApp({ env: { PETSTORE_PRODUCTION_URL: 'https://api.shop.example/v1' } })
  document = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json()
})
afterAll(() => t.close())

describe('the served OpenAPI document', () => {
  test('is valid OpenAPI 3.1', async () => {
    expect(document.openapi).toBe('3.1.0')
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined()
  })

  test('lists this server, production and staging', () => {
    expect(document.servers).toEqual([
      { url: 'http://localhost:80/v1', description: 'This server (production)' },
      { url: 'https://api.shop.example/v1', description: 'Production' },
      { url: 'https://staging.petstore.example.com/v1', description: 'Staging' },
    ])
  })

  test('has bearer security on every operation, the spec component names and getPet deprecated', () => {
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(document.security).toEqual([{ bearerAuth: [] }])
    expect(Object.keys(document.components.schemas).sort()).toEqual([
      'Error',
      'Inventory',
      'NewOrder',
      'NewPet',
      'Order',
      'OrderChange',
      'OrderStatus',
      'Orders',
      'Pet',
      'PetPatch',
      'PetStatus',
      'Pets',
      'RateLimitStatus',
    ])
    const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods))
    expect(operations.map((operation) => operation.operationId).sort()).toEqual([
      'createPet',
      'deletePet',
      'getInventory',
      'getOrder',
      'getPet',
      'getRateLimit',
      'listOrders',
      'listPets',
      'placeOrder',
      'updateOrder',
      'updatePet',
    ])
    expect(document.paths['/pets/{petId}']?.get?.deprecated).toBe(true)
    expect(document.paths['/pets/{petId}']?.get?.['x-stability']).toBe('deprecated')
    expect(document.paths['/pets']?.get?.deprecated).toBeUndefined()
    // Every operation of CONTRACT §11 is marked experimental.
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        if (!path.startsWith('/store/') && method !== 'patch' && method !== 'delete') continue
        expect(operation['x-stability'], `${method} ${path}`).toBe('experimental')
      }
    }
  })

  test('writes the paths as the spec does, relative to servers that end in /v1', async () => {
    expect(Object.keys(document.paths).sort()).toEqual([
      '/pets',
      '/pets/{petId}',
      '/rate_limit',
      '/store/inventory',
      '/store/orders',
      '/store/orders/{orderId}',
    ])
    expect(document.servers?.map((server) => new URL(server.url).pathname)).toEqual(['/v1', '/v1', '/v1'])
  })

  test('documents every error code', () => {
    const code = (document.components.schemas.Error as { properties: { code: { enum: string[] } } })
      .properties.code
    expect(code.enum).toContain('idempotency_key_reused')
    expect(code.enum).toContain('gone')
  })
})

/** Requests that drive each operation to each status it can answer on this store. */
async function observedStatuses(): Promise<Record<string, Set<number>>> {
  const key = await t.issueKey()
  const auth = { authorization: `Bearer ${key}` }
  const json = { ...auth, 'content-type': 'application/json' }
  const seen: Record<string, Set<number>> = {
    listPets: new Set(),
    createPet: new Set(),
    getPet: new Set(),
    getRateLimit: new Set(),
  }
  const send = async (operation: string, options: InjectOptions, app = t.app) => {
    seen[operation]?.add((await app.inject(options)).statusCode)
  }
  await send('listPets', { method: 'GET', url: '/v1/pets', headers: auth })
  await send('listPets', { method: 'GET', url: '/v1/pets?limit=0', headers: auth })
  await send('listPets', { method: 'GET', url: '/v1/pets' })
  const create = (payload: string, headers: Record<string, string> = json): InjectOptions => ({
    method: 'POST',
    url: '/v1/pets',
    headers,
    payload,
  })
  await send('createPet', create('{"name":"Rex","categoryId":1}', { ...json, 'idempotency-key': 'k' }))
  await send('createPet', create('{"name":"Rex","categoryId":2}', { ...json, 'idempotency-key': 'k' }))
  await send('createPet', create('{"name":""}'))
  await send('createPet', create('{}', auth))
  await send('createPet', create('{"name":"Rex","categoryId":1}', { 'content-type': 'application/json' }))
  await send('createPet', create(`{"name":"${'x'.repeat(70_000)}","categoryId":1}`))
  await send('createPet', create('name=Rex', { ...auth, 'content-type': 'text/plain' }))
  await send('getPet', { method: 'GET', url: '/v1/pets/1', headers: auth })
  await send('getPet', { method: 'GET', url: '/v1/pets/abc', headers: auth })
  await send('getPet', { method: 'GET', url: '/v1/pets/1' })
  await send('getPet', { method: 'GET', url: '/v1/pets/424242', headers: auth })
  const reader = { authorization: `Bearer ${await t.issueKey('free', undefined, 'read')}` }
  await send(
    'createPet',
    create('{"name":"Rex","categoryId":1}', { ...reader, 'content-type': 'application/json' }),
  )
  await send('getRateLimit', { method: 'GET', url: '/v1/rate_limit', headers: auth })
  // Without a key the client IP is counted with the Free numbers: the 61st request in a minute is a 429.
  for (let i = 0; i < 61; i++) {
    await send('getRateLimit', { method: 'GET', url: '/v1/rate_limit', remoteAddress: '203.0.113.9' })
  }
  const tight = { authorization: `Bearer ${await t.issueKey('enterprise', { perMinute: 1, perDay: 100 })}` }
  await send('listPets', { method: 'GET', url: '/v1/pets', headers: tight })
  await send('listPets', { method: 'GET', url: '/v1/pets', headers: tight })
  await send(
    'createPet',
    create('{"name":"Rex","categoryId":1}', { ...tight, 'content-type': 'application/json' }),
  )
  await send('getPet', { method: 'GET', url: '/v1/pets/1', headers: tight })
  t.clock.set(GET_PET_SUNSET_AT)
  await send('getPet', { method: 'GET', url: '/v1/pets/1', headers: auth })

  const broken = await buildTestApp({ env: { PETSTORE_DB_TIMEOUT_MS: '20' } })
  try {
    const brokenAuth = { authorization: `Bearer ${await broken.issueKey()}` }
    const release = await lockPets(broken)
    await send(
      'createPet',
      create('{"name":"Rex","categoryId":1}', { ...brokenAuth, 'content-type': 'application/json' }),
      broken.app,
    )
    await release()
    await broken.deps.database.db.schema.dropTable('idempotency_keys').execute()
    await broken.deps.database.db.schema.dropTable('orders').execute()
    await broken.deps.database.db.schema.dropTable('pets').execute()
    await send('listPets', { method: 'GET', url: '/v1/pets', headers: brokenAuth }, broken.app)
    await send('getPet', { method: 'GET', url: '/v1/pets/1', headers: brokenAuth }, broken.app)
    await send(
      'createPet',
      create('{"name":"Rex","categoryId":1}', { ...brokenAuth, 'content-type': 'application/json' }),
      broken.app,
    )
  } finally {
    await broken.close()
  }
  return seen
}

test('describes every status the routes actually return, and returns every status it describes', async () => {
  const seen = await observedStatuses()
  const operations = {
    listPets: document.paths['/pets']?.get,
    createPet: document.paths['/pets']?.post,
    getPet: document.paths['/pets/{petId}']?.get,
    getRateLimit: document.paths['/rate_limit']?.get,
  }
  // Reads never wait for a lock in WAL mode, and idempotent creation commits in one transaction:
  // these documented statuses only occur on a store that can be unreachable or slow to commit.
  // getRateLimit reads only the key, which the other operations' 500 and 503 already cover.
  const unreachableHere: Record<string, number[]> = {
    listPets: [503],
    getPet: [503],
    createPet: [409],
    getRateLimit: [500, 503],
  }
  for (const [name, operation] of Object.entries(operations)) {
    const documented = Object.keys(operation?.responses ?? {})
      .map(Number)
      .sort()
    const observed = [...(seen[name] ?? [])].sort()
    expect(documented, name).toEqual(expect.arrayContaining(observed))
    expect([...observed, ...(unreachableHere[name] ?? [])].sort(), name).toEqual(documented)
  }
})
