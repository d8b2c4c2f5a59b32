import { afterEach, expect, it } from 'vitest'
import { onServices } from '../helpers.js'
import { type Receiver, startReceiver, startWebhookApp, type WebhookApp } from './harness.js'

/**
 * A step whose transaction fails loses nothing: what ended is written by the next one; and an instance
 * whose steps cannot renew its leases hangs up on its requests in flight before another may take over.
 */

const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close()
})

/** An instance on a SQLite file, and another connection to that file, to take its write lock. */
async function appWithLocker(env: Record<string, string>) {
  const { default: SQLite } = await import('better-sqlite3')
  const app = await startWebhookApp({ env })
  closers.push(() => app.close())
  const { database } = app.deps.config
  if (database.kind !== 'sqlite') throw new Error('a SQLite store was expected')
  const locker = new SQLite(database.path)
  closers.push(async () => {
    if (locker.inTransaction) locker.exec('COMMIT')
    locker.close()
  })
  return { app, locker }
}

/** An endpoint at `receiver` on pet.created, and one pet created: its delivery log, to read. */
async function onePetFor(app: WebhookApp, receiver: Receiver) {
  closers.push(() => receiver.close())
  const key = await app.issueKey()
  const response = await app.api(key, 'POST', '/webhook_endpoints', {
    url: `http://hooks.test:${receiver.port}/in`,
    events: ['pet.created'],
  })
  const endpoint = (await response.json()) as { id: string }
  await app.api(key, 'POST', '/pets', { name: 'Rex', categoryId: 1 })
  return async () => (await app.api(key, 'GET', `/webhook_endpoints/${endpoint.id}/deliveries`)).json()
}

// SQLite's write lock, taken from another connection; PostgreSQL's deadlines are tested in test:services.
it.skipIf(onServices)(
  'writes an outcome down at the next step when the step that should have written it failed (the database locked past its deadline)',
  async () => {
    const { app, locker } = await appWithLocker({ PETSTORE_DB_TIMEOUT_MS: '200' })
    // The receiver answers, and at that moment another connection takes the write lock for a second: the
    // step that writes the outcome down fails after 200 ms; the next one, after the lock, writes it.
    const receiver = await startReceiver(() => {
      locker.exec('BEGIN IMMEDIATE')
      setTimeout(() => locker.exec('COMMIT'), 1_000)
      return { status: 204 }
    })
    const deliveries = await onePetFor(app, receiver)
    await receiver.waitFor(1)
    await expect
      .poll(deliveries, { timeout: 10_000 })
      .toEqual([expect.objectContaining({ attempt: 1, status: 'succeeded', httpStatus: 204 })])
    expect(receiver.received).toHaveLength(1)
  },
)

it.skipIf(onServices)(
  'hangs up on its requests in flight when it could not renew its leases for 4 s, and sends them again once it can',
  async () => {
    // Without the hang-up, the request would stay in flight for the attempt's 30 s.
    const { app, locker } = await appWithLocker({
      PETSTORE_DB_TIMEOUT_MS: '200',
      PETSTORE_WEBHOOK_TIMEOUT_MS: '30000',
    })
    // The first request is never answered, and as it arrives another connection takes the write lock:
    // no step can renew the leases; the second is answered.
    const receiver = await startReceiver(() => {
      if (receiver.received.length > 1) return { status: 204 }
      locker.exec('BEGIN IMMEDIATE')
      return { status: 204, delayMs: 60_000 }
    })
    const deliveries = await onePetFor(app, receiver)
    await receiver.waitFor(1)
    // Hung up on while the database is still locked: another instance could take the endpoint a second
    // later, and must not send beside it.
    await expect.poll(() => receiver.inFlight, { timeout: 15_000, interval: 20 }).toBe(0)
    expect(locker.inTransaction).toBe(true)
    locker.exec('COMMIT')
    const [first, second] = await receiver.waitFor(2, 15_000)
    expect(second?.headers['webhook-id']).toBe(first?.headers['webhook-id'])
    expect(receiver.overlaps).toBe(0)
    // Given back, not failed: the attempt that was hung up on is the one that succeeded.
    await expect
      .poll(deliveries, { timeout: 10_000 })
      .toEqual([expect.objectContaining({ attempt: 1, status: 'succeeded', httpStatus: 204 })])
  },
  60_000,
)
