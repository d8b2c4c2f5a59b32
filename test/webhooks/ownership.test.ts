import { expect, it } from 'vitest'
import { createClaimsRepository } from '../../src/webhooks/claims.repository.js'
import { endpointIdOf } from '../../src/webhooks/endpoints.service.js'
import { createFanOut } from '../../src/webhooks/fan-out.js'
import { build } from '../helpers.js'
import { endpointRow } from './harness.js'
import { finishedWhileHeld } from './held-write.js'

const OWNER = 'host/1/ownership-test'

/**
 * An enabled endpoint of a new account with two pending attempts held by OWNER, and the claims a
 * dispatcher asks before starting them: asked about the first, with the second queued behind it (on
 * PostgreSQL that read answers for the second too, for a window).
 */
async function heldAttempts(context: Parameters<typeof build>[0]) {
  const t = await build(context)
  const { db } = t.deps.database
  const now = t.clock.now()
  const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
  const endpoint = await db
    .insertInto('webhook_endpoints')
    .values(endpointRow(account, 'https://hooks.example/in', '["*"]', now))
    .returning('id')
    .executeTakeFirstOrThrow()
  const event = { type: 'pet.created', api_key_id: null, resource_version: 1, object: '{}', created_at: now }
  const { seq } = await db.insertInto('events').values(event).returning('seq').executeTakeFirstOrThrow()
  const attempt = { event_seq: Number(seq), endpoint_id: Number(endpoint.id), status: 'pending', due_at: 0 }
  const rows = await db
    .insertInto('webhook_attempts')
    .values([1, 2].map((number) => ({ ...attempt, attempt: number, at: now, lease_token: OWNER })))
    .returning('id')
    .execute()
  const claims = createClaimsRepository(t.deps.database)
  const [first, queued] = rows.map((row) => ({ id: Number(row.id), endpoint: { id: Number(endpoint.id) } }))
  if (!first || !queued) throw new Error('two attempts were written')
  expect(await claims.targetIfOwn(first, OWNER, [queued])).toMatchObject({ url: 'https://hooks.example/in' })
  return { t, account, endpointId: endpointIdOf(Number(endpoint.id)), queued, claims }
}

it('an attempt a read found its dispatcher’s before a DELETE does not start once the DELETE has answered', async (context) => {
  const { t, account, endpointId, queued, claims } = await heldAttempts(context)
  await t.deps.webhookEndpoints.remove(account, endpointId)
  expect(await claims.targetIfOwn(queued, OWNER)).toBeUndefined()
})

it('nor once a disabling PATCH has answered', async (context) => {
  const { t, account, endpointId, queued, claims } = await heldAttempts(context)
  await t.deps.webhookEndpoints.patch(account, endpointId, { status: 'disabled' })
  expect(await claims.targetIfOwn(queued, OWNER)).toBeUndefined()
})

it('nor once an operator’s disable has answered', async (context) => {
  const { t, queued, claims } = await heldAttempts(context)
  expect(await t.deps.webhookEndpoints.disable(queued.endpoint.id, 'disabled by the operators')).toBe(true)
  expect(await claims.targetIfOwn(queued, OWNER)).toBeUndefined()
})

it('an attempt a read found before a PATCH of its URL starts with the new URL once the PATCH has answered', async (context) => {
  const { t, account, endpointId, queued, claims } = await heldAttempts(context)
  // A public address written as such: judged without a lookup.
  const url = 'https://93.184.216.34/moved'
  await t.deps.webhookEndpoints.patch(account, endpointId, { url })
  expect(await claims.targetIfOwn(queued, OWNER)).toMatchObject({ url })
})

it('an attempt a read found before a rotation with a grace of 0 starts signed by the new secret only once the rotation has answered', async (context) => {
  const { t, account, endpointId, queued, claims } = await heldAttempts(context)
  const { secret } = await t.deps.webhookEndpoints.rotate(account, endpointId, 0)
  expect(await claims.targetIfOwn(queued, OWNER)).toEqual({
    url: 'https://hooks.example/in',
    secret,
    retired: [],
  })
})

/**
 * A fan-out that read the endpoint enabled before an ending committed, and committed after it, left a
 * pending attempt the ending never saw (PostgreSQL, where the two run side by side), and the endpoint's
 * dispatcher sent it after the answer. The ending now waits for the fan-out (SQLite's one writer at a time
 * waits for it anyway), and ends the attempt it wrote.
 */
it.for<[string, (ended: Ended) => Promise<unknown>]>([
  ['a DELETE', (t: Ended) => t.t.deps.webhookEndpoints.remove(t.account, t.endpointId)],
  [
    'a disabling PATCH',
    (t: Ended) => t.t.deps.webhookEndpoints.patch(t.account, t.endpointId, { status: 'disabled' }),
  ],
  [
    'an operator’s disable',
    (t: Ended) => t.t.deps.webhookEndpoints.disable(t.endpoint, 'disabled by the operators'),
  ],
])(
  'a fan-out in flight when %s commits leaves no attempt pending behind the answer',
  async ([, end], context) => {
    const t = await build(context)
    const handle = t.deps.database
    const now = t.clock.now()
    const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
    const { id } = await handle.db
      .insertInto('webhook_endpoints')
      .values(endpointRow(account, 'https://hooks.example/in', '["*"]', now))
      .returning('id')
      .executeTakeFirstOrThrow()
    const endpoint = Number(id)
    const event = {
      type: 'pet.created',
      api_key_id: null,
      resource_version: 1,
      object: '{}',
      created_at: now,
    }
    await handle.db.insertInto('events').values(event).execute()
    // The fan-out's transaction, held open once it has written the endpoint's attempt.
    const answered = await finishedWhileHeld(
      handle,
      async (trx) => expect(await createFanOut(handle).fanOut(trx, now)).toBe(1),
      () => end({ t, account, endpointId: endpointIdOf(endpoint), endpoint }),
    )
    expect(answered).toBe(false)
    const attempts = await handle.db
      .selectFrom('webhook_attempts')
      .select(['status', 'error'])
      .where('endpoint_id', '=', endpoint)
      .execute()
    expect(attempts).toHaveLength(1)
    expect(attempts[0]?.status).toBe('failed')
  },
)

type Ended = { t: Awaited<ReturnType<typeof build>>; account: number; endpointId: string; endpoint: number }
