import { randomUUID } from 'node:crypto'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { connectDatabase } from '../../src/db/connect.js'
import type { DbHandle } from '../../src/db/handle.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { createEventRecorder } from '../../src/events/events.publisher.js'
import { ownerIdOf } from '../../src/webhooks/owner.js'
import { stepOf } from '../webhooks/step-harness.js'
import { createTestDatabase } from './test-stores.js'

/**
 * On PostgreSQL the dispatcher numbers what committed to the outbox before each step; with no endpoint
 * enabled it writes the events already fanned out (events.publisher.ts), so that they are not marked one
 * by one afterwards (the pass-over, a second write of every row).
 */

let handle: DbHandle
let drop: () => Promise<void>
beforeEach(async () => {
  const database = await createTestDatabase()
  drop = database.drop
  handle = await connectDatabase(loadConfig({ DATABASE_URL: database.url }).database)
  await migrateToLatest(handle.db)
})
afterEach(async () => {
  await handle.close()
  await drop()
})

test('with no endpoint enabled, a step publishes the outbox already fanned out, in one transaction, with nothing left to pass over', async () => {
  const recorder = createEventRecorder(handle, () => Date.now())
  for (const id of [1, 2, 3]) {
    await handle.write((trx) =>
      recorder.record(trx, [{ type: 'pet.created', accountId: null, resourceVersion: 1, object: { id } }]),
    )
  }
  let transactions = 0
  const counted: DbHandle = {
    ...handle,
    write: (work) => {
      transactions++
      return handle.write(work)
    },
  }
  // The publication, and no second transaction: nothing waits, so the step has nothing to pass over.
  expect(await stepOf(counted, ownerIdOf(randomUUID()), []).step(true)).toEqual({ busy: false, more: false })
  expect(transactions).toBe(1)
  const events = await handle.db
    .selectFrom('events')
    .select(['object', 'fanned_out'])
    .orderBy('seq')
    .execute()
  expect(events).toEqual([
    { object: '{"id":1}', fanned_out: 1 },
    { object: '{"id":2}', fanned_out: 1 },
    { object: '{"id":3}', fanned_out: 1 },
  ])
  expect(await handle.db.selectFrom('event_outbox').selectAll().execute()).toEqual([])
})
