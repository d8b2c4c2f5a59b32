import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Migrator, sql } from 'kysely'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { hashApiKey } from '../src/api-keys/api-keys.format.js'
import { createApiKeyService } from '../src/api-keys/api-keys.service.js'
import { loadConfig } from '../src/config.js'
import { connectDatabase } from '../src/db/connect.js'
import type { DbHandle } from '../src/db/handle.js'
import { migrateToLatest } from '../src/db/migrate.js'
import * as initial from '../src/db/migrations/0001_initial.js'
import * as storageProbe from '../src/db/migrations/0002_storage_probe.js'
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
  handle = connectDatabase(loadConfig(stores.env).database, false)
})
afterAll(async () => {
  await handle?.close()
  await stores?.drop()
  rmSync(dir, { recursive: true, force: true })
})

const KEY = `ps_live_${'k'.repeat(32)}`

test('keys issued before the key-lifecycle migration keep working, and the previous version still writes', async () => {
  const before = { '0001_initial': initial, '0002_storage_probe': storageProbe }
  const migrator = new Migrator({ db: handle.db, provider: { getMigrations: async () => before } })
  expect((await migrator.migrateToLatest()).error).toBeUndefined()
  // The previous version's insert, column for column.
  const insertOldKey = (hash: string) => sql`
    insert into api_keys (key_hash, prefix, name, plan, environment, per_minute, per_day, created_at)
    values (${hash}, 'ps_live_kkkk', null, 'pro', 'production', null, null, 1)`
  await insertOldKey(hashApiKey(KEY)).execute(handle.db)

  expect(await migrateToLatest(handle.db)).toEqual([
    '0003_key_lifecycle',
    '0004_pet_lifecycle',
    '0005_store_orders',
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
