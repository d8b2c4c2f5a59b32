import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createTestStores, operatorConnection, type TestStores } from './helpers.js'
import {
  issueUnlimitedKey,
  killService,
  runCli,
  type Service,
  spawnService,
  waitUntilHealthy,
} from './service-process.js'

/**
 * Two service processes on one store (one SQLite file under `npm test`; one PostgreSQL and one Redis
 * under `npm run test:services`). Each keeps its pages and keys in memory only while provably fresh:
 * whatever one process, the CLI or an operator's shell commits is in the other's very next answer.
 */

let dir: string
let stores: TestStores
let reader: Service
let writer: Service
let key: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-fresh-'))
  stores = await createTestStores(dir)
  const env = { ...stores.env, LOG_LEVEL: 'warn' }
  ;({ key } = await issueUnlimitedKey(env, dir))
  ;[reader, writer] = await Promise.all([spawnService(env), spawnService(env)])
  await Promise.all([waitUntilHealthy(reader), waitUntilHealthy(writer)])
})

afterAll(async () => {
  await Promise.all([reader, writer].filter(Boolean).map(killService))
  await stores?.drop()
  rmSync(dir, { recursive: true, force: true })
})

type Pet = { id: number; name: string; categoryId: number; status?: string }

async function call(service: Service, path: string, init: RequestInit = {}) {
  const response = await fetch(`http://127.0.0.1:${service.port}/v1${path}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers },
  })
  return { status: response.status, body: await response.json() }
}

const list = async (service: Service, query = '') =>
  (await call(service, `/pets?limit=100${query}`)).body as Pet[]

describe('a write by another process is visible to the very next read', () => {
  test('each pet created on one instance is in the other’s next page, filtered or not, and its next getPet', async () => {
    for (let round = 0; round < 20; round++) {
      // Asked twice: the second answer may come from the reader's cache.
      await list(reader)
      const before = await list(reader, '&status=sold')
      const created = await call(writer, '/pets', {
        method: 'POST',
        body: JSON.stringify({ name: `Round ${round}`, categoryId: 1, status: 'sold' }),
      })
      expect(created.status).toBe(201)
      const pet = created.body as Pet
      expect((await list(reader)).map((p) => p.id)).toContain(pet.id)
      expect(await list(reader, '&status=sold')).toEqual([...before, pet])
      expect(await call(reader, `/pets/${pet.id}`)).toEqual({ status: 200, body: pet })
    }
  })

  test('a change an operator commits in a shell is in the next answer of both instances', async () => {
    const [first] = await list(reader)
    expect(first).toBeDefined()
    await list(writer)
    // Asked twice each: the second answer may come from the pet cache.
    for (const service of [reader, writer]) {
      await call(service, `/pets/${first?.id}`)
      expect((await call(service, `/pets/${first?.id}`)).body).toEqual(first)
    }
    const operator = await operatorConnection({ databaseUrl: stores.env.DATABASE_URL ?? '' })
    try {
      await operator.exec(`UPDATE pets SET name = 'Renamed by hand' WHERE id = ${first?.id}`)
    } finally {
      await operator.close()
    }
    for (const service of [reader, writer]) {
      expect((await list(service))[0]).toMatchObject({ id: first?.id, name: 'Renamed by hand' })
      expect((await call(service, `/pets/${first?.id}`)).body).toMatchObject({ name: 'Renamed by hand' })
    }
  })

  test('a key revoked through the CLI is refused by both instances on their next request', async () => {
    const env = { ...stores.env, LOG_LEVEL: 'warn' }
    const { id, key: doomed } = await issueUnlimitedKey(env, dir)
    const auth = { authorization: `Bearer ${doomed}` }
    for (const service of [reader, writer])
      expect((await call(service, '/pets', { headers: auth })).status).toBe(200)
    expect((await runCli(['keys', 'revoke', String(id)], env, dir)).code).toBe(0)
    for (const service of [reader, writer]) {
      const refused = await call(service, '/pets', { headers: auth })
      expect(refused).toMatchObject({ status: 401, body: { message: 'the API key has been revoked' } })
    }
  })
})
