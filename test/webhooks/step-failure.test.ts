import { afterEach, expect, it } from 'vitest'
import { onServices } from '../helpers.js'
import { startReceiver, startWebhookApp } from './harness.js'

/** A step whose transaction fails loses nothing: what ended is written by the next one. */

const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close()
})

// SQLite's write lock, taken from another connection; PostgreSQL's deadlines are tested in test:services.
it.skipIf(onServices)(
  'writes an outcome down at the next step when the step that should have written it failed (the database locked past its deadline)',
  async () => {
    const { default: SQLite } = await import('better-sqlite3')
    const app = await startWebhookApp({ env: { PETSTORE_DB_TIMEOUT_MS: '200' } })
    closers.push(() => app.close())
    const { database } = app.deps.config
    if (database.kind !== 'sqlite') throw new Error('a SQLite store was expected')
    const locker = new SQLite(database.path)
    closers.push(async () => {
      locker.close()
    })
    // The receiver answers, and at that moment another connection takes the write lock for a second: the
    // step that writes the outcome down fails after 200 ms; the next one, after the lock, writes it.
    const receiver = await startReceiver(() => {
      locker.exec('BEGIN IMMEDIATE')
      setTimeout(() => locker.exec('COMMIT'), 1_000)
      return { status: 204 }
    })
    closers.push(() => receiver.close())
    const key = await app.issueKey()
    const response = await app.api(key, 'POST', '/webhook_endpoints', {
      url: `http://hooks.test:${receiver.port}/in`,
      events: ['pet.created'],
    })
    const endpoint = (await response.json()) as { id: string }
    await app.api(key, 'POST', '/pets', { name: 'Rex', categoryId: 1 })
    await receiver.waitFor(1)
    const deliveries = async () =>
      (await app.api(key, 'GET', `/webhook_endpoints/${endpoint.id}/deliveries`)).json()
    await expect
      .poll(deliveries, { timeout: 10_000 })
      .toEqual([expect.objectContaining({ attempt: 1, status: 'succeeded', httpStatus: 204 })])
    expect(receiver.received).toHaveLength(1)
  },
)
