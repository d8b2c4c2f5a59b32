import { sql } from 'kysely'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { buildTestApp, onServices, type TestApp } from './helpers.js'

/**
 * A database that cannot grow (a full disk, a file-size limit): SQLite's `max_page_count` on the service's
 * own writing connection makes the file full at its current size.
 */
let t: TestApp
let key: string
beforeAll(async () => {
  t = await buildTestApp()
  key = await t.issueKey()
})
afterAll(() => t?.close())

const create = (name: string) =>
  t.app.inject({
    method: 'POST',
    url: '/v1/pets',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ name, categoryId: 1 }),
  })

test.skipIf(onServices)(
  'a full database answers writes 503 unavailable and /readyz 503, keeps reads working, and recovers',
  async () => {
    const pages = await sql<{ page_count: number }>`PRAGMA page_count`.execute(t.deps.database.db)
    await sql.raw(`PRAGMA max_page_count = ${pages.rows[0]?.page_count}`).execute(t.deps.database.db)
    const statuses: number[] = []
    let refused: Awaited<ReturnType<typeof create>> | undefined
    for (let i = 0; i < 500 && !refused; i++) {
      const response = await create(`Pet ${i} ${'x'.repeat(90)}`)
      statuses.push(response.statusCode)
      if (response.statusCode !== 201) refused = response
    }
    expect(refused?.statusCode, `statuses: ${statuses.join(',')}`).toBe(503)
    expect(refused?.json()).toMatchObject({ code: 'unavailable', status: 503 })
    expect(refused?.headers['retry-after']).toBe('1')
    const created = statuses.filter((status) => status === 201).length
    const list = await t.app.inject({
      method: 'GET',
      url: '/v1/pets?limit=100',
      headers: { authorization: `Bearer ${key}` },
    })
    expect(list.statusCode).toBe(200)
    expect(list.json()).toHaveLength(Math.min(created, 100))
    const ready = () => t.app.inject({ method: 'GET', url: '/readyz' })
    expect((await ready()).statusCode).toBe(503)
    expect((await ready()).json()).toMatchObject({ code: 'unavailable', status: 503 })
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200)
    await sql.raw('PRAGMA max_page_count = 1073741823').execute(t.deps.database.db)
    // No request writes: /readyz's own probe write finds the storage writable again.
    expect((await ready()).statusCode).toBe(200)
    expect((await create('After the disk was freed')).statusCode).toBe(201)
  },
)
