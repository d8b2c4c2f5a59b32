import { expect, it, type TestContext } from 'vitest'
import type { DbHandle } from '../../src/db/handle.js'
import { endpointIdOf } from '../../src/webhooks/endpoints.service.js'
import { LINGER_MS, RENEW_MS } from '../../src/webhooks/step.js'
import { build } from '../helpers.js'
import { endpointRow } from './harness.js'
import { stepOf } from './step-harness.js'

/**
 * A new account's endpoint leased by a step of `owner` over the database (as `wrap` gives it), with
 * `events` events fanned out to it and their attempts queued in the step's lane, which never sends.
 */
async function queuedIn(
  context: TestContext,
  events: number,
  owner: string,
  wrap: (handle: DbHandle) => DbHandle = (handle) => handle,
) {
  const t = await build(context)
  const { db } = t.deps.database
  const now = t.clock.now()
  const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
  const { id } = await db
    .insertInto('webhook_endpoints')
    .values(endpointRow(account, 'https://hooks.example/in', '["*"]', now))
    .returning('id')
    .executeTakeFirstOrThrow()
  const event = { type: 'pet.created', api_key_id: null, resource_version: 1, object: '{}', created_at: now }
  await db.insertInto('events').values(Array(events).fill(event)).execute()
  const step = stepOf(wrap(t.deps.database), owner, [], t.clock)
  while ((await step.step(true)).busy) {}
  return { t, db, account, endpoint: Number(id), step }
}

/**
 * A pending attempt of an endpoint already ended: what a fan-out that read the endpoint enabled leaves when it
 * commits after the dispatcher's own disable (a 410, five days of failures), which does not wait for it as an
 * answered DELETE or PATCH does (PostgreSQL). Here the endpoint is leased by a dispatcher's step, its lane
 * holds the first attempt, and the ending is written straight to the row before a second attempt is.
 */
async function orphanBehindAnEnding(context: TestContext, ending: Record<string, unknown>) {
  const { t, db, account, endpoint, step } = await queuedIn(context, 2, 'host/1/ended')
  const [first, orphan] = await db
    .selectFrom('webhook_attempts')
    .select(['id', 'lease_token'])
    .where('endpoint_id', '=', endpoint)
    .orderBy('id')
    .execute()
  expect(first?.lease_token).toBe('host/1/ended')
  await db.updateTable('webhook_endpoints').set(ending).where('id', '=', endpoint).execute()
  // The second attempt, pending and not taken yet, as the late fan-out leaves it.
  await db
    .updateTable('webhook_attempts')
    .set({ lease_token: null, status: 'pending' })
    .where('id', '=', Number(orphan?.id))
    .execute()
  const statusOf = async () =>
    db
      .selectFrom('webhook_attempts')
      .select(['status', 'error'])
      .where('id', '=', Number(orphan?.id))
      .executeTakeFirstOrThrow()
  return { t, account, endpoint, step, statusOf }
}

it.for([
  [
    { status: 'disabled', disabled_reason: 'the endpoint answered 410 Gone' },
    'the endpoint answered 410 Gone',
  ],
  [{ deleted_at: 1 }, 'the endpoint was deleted'],
] as const)(
  'an attempt taken for an endpoint that ended (%o) ends unsent, with why',
  async ([ending, why], context) => {
    const { step, statusOf } = await orphanBehindAnEnding(context, ending)
    // Its lane, still leased, takes it at its next refill: it ends there instead of being sent.
    await step.step(true)
    expect(await statusOf()).toEqual({ status: 'failed', error: why })
  },
)

it('a re-enable ends what a disabled endpoint still had pending: nothing from before it is sent', async (context) => {
  const { t, account, endpoint, statusOf } = await orphanBehindAnEnding(context, { status: 'disabled' })
  await t.deps.webhookEndpoints.patch(account, endpointIdOf(endpoint), { status: 'enabled' })
  expect(await statusOf()).toEqual({ status: 'failed', error: 'the endpoint was disabled' })
})

/** Three attempts queued (`queuedIn`), their rows as they stand, and who leases their endpoint. */
async function threeQueued(context: TestContext, wrap?: (handle: DbHandle) => DbHandle) {
  const { t, db, account, endpoint, step } = await queuedIn(context, 3, 'host/1/keys', wrap)
  const attempts = () =>
    db.selectFrom('webhook_attempts').select(['status', 'error', 'lease_token']).orderBy('id').execute()
  expect(await attempts()).toEqual(
    Array(3).fill({ status: 'pending', error: null, lease_token: 'host/1/keys' }),
  )
  const leaseOwner = async () =>
    (
      await db
        .selectFrom('webhook_endpoints')
        .select('lease_owner')
        .where('id', '=', endpoint)
        .executeTakeFirstOrThrow()
    ).lease_owner
  return { t, db, account, step, attempts, leaseOwner }
}

/**
 * A key revoked or expired while its account's attempts wait in a lane's queue (up to 1,000 for a fast
 * endpoint): the next renewal, within RENEW_MS, takes them out of the lane, and the step after it, soon,
 * ends them unsent, with why, rather than sending them in turn; the lane, idle then, is let go as any other.
 */
it.for([
  ['revoked', { revoked_at: 1 }, "the account's key was revoked"],
  ['expired', { expires_at: 1 }, "the account's key expired on 1970-01-01T00:00:00.001Z"],
] as const)(
  'attempts queued when the key is %s are taken out at the next renewal and end unsent',
  async ([, ending, why], context) => {
    const { t, db, account, step, attempts, leaseOwner } = await threeQueued(context)
    await db.updateTable('api_keys').set(ending).where('id', '=', account).execute()
    t.clock.advance(RENEW_MS)
    // Busy: the dispatcher steps again at once, not after a poll.
    expect((await step.step(true)).busy).toBe(true)
    expect(await attempts()).toEqual(
      Array(3).fill({ status: 'pending', error: null, lease_token: 'host/1/keys' }),
    )
    expect(await leaseOwner()).toBe('host/1/keys')
    // The lane, idle since, is let go as any other once it has been for LINGER_MS.
    t.clock.advance(LINGER_MS)
    await step.step(true)
    expect(await attempts()).toEqual(Array(3).fill({ status: 'failed', error: why, lease_token: null }))
    expect(await leaseOwner()).toBeNull()
  },
)

it('attempts whose ending could not be written (a lost connection) are ended by the next step', async (context) => {
  let writes = 0
  let failAt = Number.POSITIVE_INFINITY
  const flaky = (handle: DbHandle): DbHandle =>
    Object.assign(Object.create(handle), {
      write: (work: Parameters<DbHandle['write']>[0]) =>
        ++writes === failAt ? Promise.reject(new Error('the connection was lost')) : handle.write(work),
    })
  const { t, db, account, step, attempts } = await threeQueued(context, flaky)
  await t.deps.apiKeys.revokeApiKey(account)
  t.clock.advance(RENEW_MS)
  // The renewal takes the queued attempts out of the lane; the step that ends them fails.
  await step.step(true)
  failAt = writes + 1
  await expect(step.step(true)).rejects.toThrow('the connection was lost')
  expect(await attempts()).toEqual(
    Array(3).fill({ status: 'pending', error: null, lease_token: 'host/1/keys' }),
  )
  await step.step(true)
  const why = "the account's key was revoked"
  expect(await attempts()).toEqual(Array(3).fill({ status: 'failed', error: why, lease_token: null }))
  expect(await db.selectFrom('webhook_attempts').selectAll().execute()).toHaveLength(3)
})
