import { afterAll, beforeAll, expect, test } from 'vitest'
import { buildTestApp, lockPets, type TestApp } from './helpers.js'

/**
 * A database locked by another connection (an operator's shell, a backup; on PostgreSQL a table lock):
 * a write waits at most PETSTORE_DB_TIMEOUT_MS and then gets 503, while reads, /healthz and other keys'
 * requests go on being answered meanwhile (CONTRACT §13). SQLite's own busy wait used to sleep on the
 * event loop, so a list of another key waited as long as the locked write.
 */
const DEADLINE_MS = 1500
let t: TestApp
let writer: string
let reader: string
beforeAll(async () => {
  t = await buildTestApp({ env: { PETSTORE_DB_TIMEOUT_MS: String(DEADLINE_MS) } })
  writer = await t.issueKey()
  reader = await t.issueKey()
})
afterAll(() => t?.close())

test('a locked write waits out its deadline without holding up reads, then 503; the next write succeeds', async () => {
  const release = await lockPets(t)
  try {
    let settled = false
    const started = Date.now()
    const write = t.app
      .inject({
        method: 'POST',
        url: '/v1/pets',
        headers: { ...t.auth(writer), 'content-type': 'application/json' },
        payload: { name: 'Rex', categoryId: 1 },
      })
      .finally(() => {
        settled = true
      })
    const reads: number[] = []
    for (let round = 0; round < 5; round++) {
      const readStarted = Date.now()
      const list = await t.app.inject({ method: 'GET', url: '/v1/pets', headers: t.auth(reader) })
      reads.push(Date.now() - readStarted)
      expect(list.statusCode).toBe(200)
      expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200)
      expect(settled, 'a read had to wait for the locked write').toBe(false)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const refused = await write
    expect(refused.statusCode).toBe(503)
    expect(refused.json()).toMatchObject({ code: 'unavailable', status: 503 })
    expect(refused.headers['retry-after']).toBe('1')
    const waited = Date.now() - started
    expect(waited).toBeGreaterThanOrEqual(DEADLINE_MS - 50)
    console.info(
      `database locked, deadline ${DEADLINE_MS} ms: createPet 503 after ${waited} ms; meanwhile listPets of another key in ${reads.join(', ')} ms`,
    )
  } finally {
    await release()
  }
  const created = await t.app.inject({
    method: 'POST',
    url: '/v1/pets',
    headers: { ...t.auth(writer), 'content-type': 'application/json' },
    payload: { name: 'Rex', categoryId: 1 },
  })
  expect(created.statusCode).toBe(201)
})

test('a lock is not a storage failure: /readyz stays 200 while a write waits for it', async () => {
  const release = await lockPets(t)
  try {
    const write = t.app.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: { ...t.auth(writer), 'content-type': 'application/json' },
      payload: { name: 'Rex', categoryId: 1 },
    })
    expect((await write).statusCode).toBe(503)
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200)
  } finally {
    await release()
  }
})
