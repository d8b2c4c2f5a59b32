import { type AddressInfo, createConnection, createServer, type Server, type Socket } from 'node:net'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers.js'
import { createTestDatabase } from './test-stores.js'

/**
 * A write whose outcome is unknown at its deadline (CONTRACT §13): PostgreSQL commits, but the answer to
 * COMMIT reaches the service only after PETSTORE_DB_TIMEOUT_MS. The service answers 503 (it cannot know);
 * the client's retry with the same Idempotency-Key gets the original 201 once, and one pet exists.
 */
const DEADLINE_MS = 500

/**
 * A TCP proxy in front of PostgreSQL. Once armed, the connection that next sends a COMMIT gets everything
 * PostgreSQL answers from then on `delayMs` late: the commit happens on time, its acknowledgement does not.
 */
async function startCommitDelayProxy(target: URL, delayMs: number) {
  const sockets = new Set<Socket>()
  let armed = false
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: target.hostname, port: Number(target.port) })
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('error', () => {}).on('close', () => sockets.delete(socket))
    }
    let delayed = false
    client.on('data', (chunk: Buffer) => {
      // The simple-query message Kysely sends to commit: 'Q', length, "commit\0".
      if (armed && chunk.includes('commit\0')) {
        armed = false
        delayed = true
      }
      upstream.write(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      if (delayed) setTimeout(() => client.write(chunk), delayMs)
      else client.write(chunk)
    })
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = new URL(target)
  url.port = String((server.address() as AddressInfo).port)
  return {
    url: url.toString(),
    arm: () => {
      armed = true
    },
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

let database: Awaited<ReturnType<typeof createTestDatabase>>
let proxy: Awaited<ReturnType<typeof startCommitDelayProxy>>
let t: TestApp
beforeAll(async () => {
  database = await createTestDatabase()
  proxy = await startCommitDelayProxy(new URL(database.url), DEADLINE_MS * 3)
  t = await buildTestApp({ env: { DATABASE_URL: proxy.url, PETSTORE_DB_TIMEOUT_MS: String(DEADLINE_MS) } })
})
afterAll(async () => {
  await t?.close()
  await proxy?.close()
  await database?.drop()
})

test('a commit acknowledged after the deadline is a 503; the retry with its Idempotency-Key returns the original 201 once', async () => {
  const key = await t.issueKey()
  const create = () =>
    t.app.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: { ...t.auth(key), 'idempotency-key': 'order-7', 'content-type': 'application/json' },
      payload: { name: 'Slow Commit', categoryId: 3 },
    })
  proxy.arm()
  const unknown = await create()
  expect(unknown.statusCode).toBe(503)
  expect(unknown.json()).toMatchObject({ code: 'unavailable', status: 503 })
  expect(unknown.headers['retry-after']).toBe('1')

  const retry = await create()
  expect(retry.statusCode).toBe(201)
  expect(retry.headers['idempotent-replayed']).toBe('true')
  const again = await create()
  expect(again.json()).toEqual(retry.json())
  const list = await t.app.inject({ method: 'GET', url: '/v1/pets?limit=100', headers: t.auth(key) })
  expect(list.json().filter((pet: { name: string }) => pet.name === 'Slow Commit')).toHaveLength(1)
})
