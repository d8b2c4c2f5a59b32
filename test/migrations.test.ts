import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { hashApiKey } from '../src/api-keys/api-keys.format.js'
import { createApiKeyService } from '../src/api-keys/api-keys.service.js'
import { loadConfig } from '../src/config.js'
import { connectDatabase } from '../src/db/connect.js'
import type { DbHandle } from '../src/db/handle.js'
import { createMigrator, migrateToLatest } from '../src/db/migrate.js'
import { createInventoryRepository } from '../src/orders/inventory.repository.js'
import { createTestStores, FakeClock, type TestStores } from './helpers.js'

/**
 * The key-lifecycle migration on a database that already holds keys, as a rolling deploy meets it: keys
 * issued before keep working (as `write` keys without expiry), and the previous version's statements
 * still run against the migrated schema. SQLite in `npm test`, PostgreSQL in `test:services`.
 */
let dir: string
let stores: TestStores
let handle: DbHandle
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-migrations-'))
  stores = await createTestStores(dir)
  handle = await connectDatabase(loadConfig(stores.env).database, false)
})
afterAll(async () => {
  await handle?.close()
  await stores?.drop()
  rmSync(dir, { recursive: true, force: true })
})

/** Runs `test` on a database of its own (fresh stores), closed and dropped after it. */
async function onFreshDatabase(test: (db: DbHandle) => Promise<void>): Promise<void> {
  const own = mkdtempSync(join(tmpdir(), 'petstore-migrations-'))
  const fresh = await createTestStores(own)
  const db = await connectDatabase(loadConfig(fresh.env).database, false)
  try {
    await test(db)
  } finally {
    await db.close()
    await fresh.drop()
    rmSync(own, { recursive: true, force: true })
  }
}

const KEY = `ps_live_${'k'.repeat(32)}`

test('keys issued before the key-lifecycle migration keep working, and the previous version still writes', async () => {
  expect((await createMigrator(handle.db).migrateTo('0002_storage_probe')).error).toBeUndefined()
  // The previous version's insert, column for column.
  const insertOldKey = (hash: string) => sql`
    insert into api_keys (key_hash, prefix, name, plan, environment, per_minute, per_day, created_at)
    values (${hash}, 'ps_live_kkkk', null, 'pro', 'production', null, null, 1)`
  await insertOldKey(hashApiKey(KEY)).execute(handle.db)

  expect(await migrateToLatest(handle.db)).toEqual([
    '0003_key_lifecycle',
    '0004_pet_lifecycle',
    '0005_store_orders',
    '0006_pet_status_counts',
    '0007_events_webhooks',
    '0008_webhook_lanes',
    '0009_event_trace_context',
    '0010_idempotent_responses',
    '0011_subscription_history_order',
    '0012_endpoint_partial_indexes',
  ])
  const service = createApiKeyService({ handle, clock: new FakeClock(), env: 'production' })
  expect(await service.verifyApiKey(KEY)).toMatchObject({
    plan: 'pro',
    scope: 'write',
    expiresAt: null,
    lastUsedAt: null,
  })

  await insertOldKey('another-hash').execute(handle.db)
  const rows = await handle.db.selectFrom('api_keys').select(['key_hash', 'scope']).orderBy('id').execute()
  expect(rows.map((row) => row.scope)).toEqual(['write', 'write'])
})

test("the inventory counts start from the pets already stored, and count the previous version's writes", async () => {
  await onFreshDatabase(async (db) => {
    expect((await createMigrator(db.db).migrateTo('0005_store_orders')).error).toBeUndefined()
    // The previous version's insert, column for column; two deleted pets and one without a status.
    const insertPet = (status: string | null, deletedAt: number | null = null) => sql`
    insert into pets (name, category_id, status, created_at, deleted_at)
    values ('Rex', 1, ${status}, 1, ${deletedAt})`
    for (const status of ['available', 'available', 'pending', 'sold', null])
      await insertPet(status).execute(db.db)
    for (const status of ['available', 'sold']) await insertPet(status, 2).execute(db.db)

    expect(await migrateToLatest(db.db)).toEqual([
      '0006_pet_status_counts',
      '0007_events_webhooks',
      '0008_webhook_lanes',
      '0009_event_trace_context',
      '0010_idempotent_responses',
      '0011_subscription_history_order',
      '0012_endpoint_partial_indexes',
    ])
    expect(await createInventoryRepository(db).readInventory()).toEqual({ available: 2, pending: 1, sold: 1 })

    // The previous version's writes on the migrated schema: the triggers count them.
    await insertPet('pending').execute(db.db)
    await sql`update pets set status = 'sold', version = version + 1 where status = 'pending'`.execute(db.db)
    await sql`update pets set deleted_at = 3 where id = 1`.execute(db.db)
    await sql`update pets set name = 'Max' where id = 2`.execute(db.db)
    const expected = { available: 1, pending: 0, sold: 3 }
    expect(await createInventoryRepository(db).readInventory()).toEqual(expected)
    await createInventoryRepository(db).compactStatusCounts()
    expect(await createInventoryRepository(db).readInventory()).toEqual(expected)
    const rows = await db.db.selectFrom('pet_status_counts').select('status').execute()
    expect(rows.map((row) => row.status).sort()).toEqual(['available', 'sold'])
  })
})

test('a secret in its rotation grace before 0008 keeps signing after it', async () => {
  await onFreshDatabase(async (db) => {
    expect((await createMigrator(db.db).migrateTo('0007_events_webhooks')).error).toBeUndefined()
    await sql`insert into api_keys (key_hash, prefix, name, plan, environment, per_minute, per_day, created_at)
    values ('h', 'ps_live_kkkk', null, 'pro', 'production', null, null, 1)`.execute(db.db)
    // The previous version's rotation, column for column.
    await sql`insert into webhook_endpoints (api_key_id, url, events, status, secret, previous_secret,
      previous_secret_until, enabled_after_seq, created_at)
    values (1, 'https://93.184.216.34/', '["*"]', 'enabled', 'whsec_new', 'whsec_old', 99, 0, 1)`.execute(
      db.db,
    )
    expect(await migrateToLatest(db.db)).toEqual([
      '0008_webhook_lanes',
      '0009_event_trace_context',
      '0010_idempotent_responses',
      '0011_subscription_history_order',
      '0012_endpoint_partial_indexes',
    ])
    const row = await db.db
      .selectFrom('webhook_endpoints')
      .select('retired_secrets')
      .executeTakeFirstOrThrow()
    expect(JSON.parse(row.retired_secrets)).toEqual([{ secret: 'whsec_old', until: 99 }])
  })
})

test('subscriptions kept before 0011 keep the order they were kept in, and the previous version still keeps them', async () => {
  await onFreshDatabase(async (db) => {
    expect((await createMigrator(db.db).migrateTo('0010_idempotent_responses')).error).toBeUndefined()
    // The previous version's insert, column for column: two PATCHes with no event between them.
    const keep = (events: string) =>
      sql`insert into webhook_subscription_history (endpoint_id, until_seq, events)
      values (1, 7, ${events})`.execute(db.db)
    await keep('["pet.created"]')
    await keep('["pet.deleted"]')
    expect(await migrateToLatest(db.db)).toEqual([
      '0011_subscription_history_order',
      '0012_endpoint_partial_indexes',
    ])
    await keep('["order.placed"]')
    const rows = await db.db
      .selectFrom('webhook_subscription_history')
      .select(['id', 'events'])
      .orderBy('id')
      .execute()
    expect(rows.map((row) => row.events)).toEqual(['["pet.created"]', '["pet.deleted"]', '["order.placed"]'])
    // And back: the previous version's table, every row kept.
    expect((await createMigrator(db.db).migrateTo('0010_idempotent_responses')).error).toBeUndefined()
    await keep('["order.approved"]')
    const back = await sql<{ events: string }>`select events from webhook_subscription_history`.execute(db.db)
    expect(back.rows.map((row) => row.events).sort()).toEqual(
      ['["order.approved"]', '["order.placed"]', '["pet.created"]', '["pet.deleted"]'].sort(),
    )
  })
})

test('endpoints ended before 0012 with attempts still pending are marked for the sweep, and no other', async () => {
  await onFreshDatabase(async (db) => {
    expect((await createMigrator(db.db).migrateTo('0011_subscription_history_order')).error).toBeUndefined()
    await sql`insert into api_keys (key_hash, prefix, name, plan, environment, per_minute, per_day, created_at)
    values ('h', 'ps_live_kkkk', null, 'pro', 'production', null, null, 1)`.execute(db.db)
    // The previous version's inserts, column for column: deleted, disabled and enabled endpoints, each
    // with a pending attempt, and a deleted one with none.
    const endpoint = (status: string, deletedAt: number | null) =>
      sql`insert into webhook_endpoints (api_key_id, url, events, status, secret, enabled_after_seq,
        created_at, deleted_at)
      values (1, 'https://93.184.216.34/', '["*"]', ${status}, 'whsec_AA==', 0, 1, ${deletedAt})`.execute(
        db.db,
      )
    await endpoint('enabled', 2)
    await endpoint('disabled', null)
    await endpoint('enabled', null)
    await endpoint('enabled', 2)
    for (const id of [1, 2, 3])
      await sql`insert into webhook_attempts (event_seq, endpoint_id, attempt, status, due_at, at)
      values (1, ${id}, 1, 'pending', 1, 1)`.execute(db.db)
    expect(await migrateToLatest(db.db)).toEqual(['0012_endpoint_partial_indexes'])
    const marked = await db.db
      .selectFrom('webhook_endpoints')
      .select('id')
      .where('sweep_until', 'is not', null)
      .orderBy('id')
      .execute()
    expect(marked.map((row) => Number(row.id))).toEqual([1, 2])
    // The previous version's insert still runs, and back.
    await endpoint('enabled', null)
    expect((await createMigrator(db.db).migrateTo('0011_subscription_history_order')).error).toBeUndefined()
  })
})
