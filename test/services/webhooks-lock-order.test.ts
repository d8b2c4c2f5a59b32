import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { createApiKeyRepository } from '../../src/api-keys/api-keys.repository.js'
import { loadConfig } from '../../src/config.js'
import { connectDatabase } from '../../src/db/connect.js'
import type { DbHandle } from '../../src/db/handle.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { createEndpointsRepository } from '../../src/webhooks/endpoints.repository.js'
import { ownerIdOf } from '../../src/webhooks/owner.js'
import { LINGER_MS, RENEW_MS } from '../../src/webhooks/step.js'
import { stepOf } from '../webhooks/step-harness.js'
import { createTestDatabase } from './test-stores.js'

/**
 * A step that renews its leases, or lets idle lanes go, takes the endpoint rows' locks in id order, as a
 * redelivery takes an account's: never one row locked while it waits for a lower one (two such
 * transactions would wait on each other in a circle, and PostgreSQL would roll one back). Its leasing
 * skips rows others hold.
 */

let handle: DbHandle
let url: string
let drop: () => Promise<void>
beforeEach(async () => {
  const database = await createTestDatabase()
  ;({ url, drop } = database)
  handle = await connectDatabase(loadConfig({ DATABASE_URL: url }).database)
  await migrateToLatest(handle.db)
})
afterEach(async () => {
  await handle.close()
  await drop()
})

async function client(): Promise<pg.Client> {
  const connection = new pg.Client({ connectionString: url })
  await connection.connect()
  return connection
}

/** Waits until one session of this database waits for a lock; fails the test if none does within 2 s. */
async function untilOneWaits(prober: pg.Client): Promise<void> {
  const waiting = async () =>
    (
      await prober.query(
        "select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()",
      )
    ).rows[0].n as number
  for (let tries = 0; tries < 100 && (await waiting()) === 0; tries++) await sleep(20)
  expect(await waiting()).toBe(1)
}

/** Whether `id`'s row can be locked at once by another session (nothing holds it). */
async function isFree(prober: pg.Client, id: number): Promise<boolean> {
  await prober.query('begin')
  try {
    await prober.query('select id from webhook_endpoints where id = $1 for update nowait', [id])
    return true
  } catch {
    return false
  } finally {
    await prober.query('rollback')
  }
}

/**
 * The low row written again: its newest version lies after the high one's, so a statement that locks rows
 * in the order it meets them meets the high one first.
 */
async function moveAfterHigh(lowId: number): Promise<void> {
  await handle.db
    .updateTable('webhook_endpoints')
    .set({ description: 'moved' })
    .where('id', '=', lowId)
    .execute()
}

/** An account with two endpoints, `low` and `high` (ids in that order). */
async function twoEndpoints() {
  const account = await createApiKeyRepository(handle).insertApiKey({
    keyHash: `hash-${randomUUID()}`,
    prefix: 'ps_live_abcd',
    name: null,
    plan: 'free',
    environment: 'production',
    custom: {},
    scope: 'write',
    expiresAt: null,
    createdAt: Date.now(),
  })
  const endpoints = createEndpointsRepository(handle)
  const fields = { url: 'https://hooks.example/in', events: ['*'], description: null }
  const [low, high] = await handle.write(async (trx) => [
    await endpoints.insert(trx, account.id, fields, 'whsec_a', Date.now()),
    await endpoints.insert(trx, account.id, fields, 'whsec_b', Date.now()),
  ])
  return { account, low, high }
}

/** Both endpoints leased by a new owner; its id. */
async function leasedToOne(): Promise<string> {
  const owner = ownerIdOf(randomUUID())
  await handle.db
    .updateTable('webhook_endpoints')
    .set({ lease_owner: owner, lease_until: Date.now() + 60_000 })
    .execute()
  return owner
}

/**
 * Runs `step` while another session holds the low row: the step must wait for it (one session waiting)
 * with the high row free meanwhile. Then the low row is let go and the step must finish.
 */
async function expectWaitsForLowOnly(
  step: ReturnType<typeof stepOf>,
  low: { id: number },
  high: { id: number },
): Promise<void> {
  const blocker = await client()
  const prober = await client()
  try {
    await blocker.query('begin')
    await blocker.query('select id from webhook_endpoints where id = $1 for update', [low.id])
    const stepping = step.step(true).catch((error: unknown) => error)
    await untilOneWaits(prober)
    // Meanwhile the high row is free: nothing of the step holds it.
    expect(await isFree(prober, high.id)).toBe(true)
    await blocker.query('rollback')
    expect(await stepping).toMatchObject({ busy: expect.any(Boolean) })
  } finally {
    await blocker.end()
    await prober.end()
  }
}

test('a renewing step waiting for its lowest endpoint row holds none of the higher ones meanwhile', async () => {
  const { account, low, high } = await twoEndpoints()
  const owner = await leasedToOne()
  await moveAfterHigh(low.id)
  const step = stepOf(
    handle,
    owner,
    [low, high].map((row) => ({ id: row.id, accountId: account.id })),
  )
  // Its first step renews (it never has).
  await expectWaitsForLowOnly(step, low, high)
})

test('leasing skips an endpoint another transaction holds instead of waiting for it', async () => {
  const { low, high } = await twoEndpoints()
  // Both have an attempt due, and no lease: a step would lease both.
  const [event] = await handle.db
    .insertInto('events')
    .values({ type: 'pet.created', api_key_id: null, resource_version: 1, object: '{}', created_at: 0 })
    .returning('seq')
    .execute()
  const due = (endpointId: number) => ({
    event_seq: event?.seq ?? 0,
    endpoint_id: endpointId,
    attempt: 1,
    status: 'pending',
    due_at: 0,
    at: 0,
  })
  await handle.db
    .insertInto('webhook_attempts')
    .values([due(low.id), due(high.id)])
    .execute()
  const blocker = await client()
  try {
    // Another transaction holds the low row (a PATCH of it, say) while the step leases.
    await blocker.query('begin')
    await blocker.query('select id from webhook_endpoints where id = $1 for update', [low.id])
    // Waiting for it would outlast the step's deadline and fail the step: it leases the other instead.
    const owner = ownerIdOf(randomUUID())
    expect(await stepOf(handle, owner, []).step(true)).toMatchObject({ busy: true })
    const leased = await handle.db
      .selectFrom('webhook_endpoints')
      .select(['id', 'lease_owner'])
      .orderBy('id')
      .execute()
    expect(leased).toEqual([
      { id: low.id, lease_owner: null },
      { id: high.id, lease_owner: owner },
    ])
  } finally {
    await blocker.query('rollback')
    await blocker.end()
  }
})

test('a step letting idle lanes go, without renewing, waits for its lowest endpoint row holding none of the higher ones', async () => {
  const { account, low, high } = await twoEndpoints()
  const owner = await leasedToOne()
  let now = Date.now()
  const clock = { now: () => now, monotonic: () => now }
  // Lanes with nothing to send since half a LINGER_MS before the first step, which renews (it never has).
  const step = stepOf(
    handle,
    owner,
    [low, high].map((row) => ({ id: row.id, accountId: account.id })),
    clock,
    now - LINGER_MS / 2,
  )
  await step.step(true)
  // Later, but before the next renewal: both lanes are idle now, and this step only lets them go.
  now += LINGER_MS / 2 + 100
  expect(LINGER_MS / 2 + 100).toBeLessThan(RENEW_MS)
  await moveAfterHigh(low.id)
  await expectWaitsForLowOnly(step, low, high)
  const leases = await handle.db.selectFrom('webhook_endpoints').select('lease_owner').execute()
  expect(leases).toEqual([{ lease_owner: null }, { lease_owner: null }])
})
