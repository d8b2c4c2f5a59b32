import { expect, it } from 'vitest'
import { createClaimsRepository } from '../../src/webhooks/claims.repository.js'
import { endpointIdOf } from '../../src/webhooks/endpoints.service.js'
import { build } from '../helpers.js'
import { endpointRow } from './harness.js'

const OWNER = 'host/1/ownership-test'

/**
 * An enabled endpoint of a new account with one pending attempt held by OWNER, and the claims a dispatcher
 * asks before starting it, already asked once (on PostgreSQL that read answers for a window).
 */
async function heldAttempt(context: Parameters<typeof build>[0]) {
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
  const { id } = await db
    .insertInto('webhook_attempts')
    .values({
      event_seq: Number(seq),
      endpoint_id: Number(endpoint.id),
      attempt: 1,
      status: 'pending',
      due_at: 0,
      at: now,
      lease_token: OWNER,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  const claims = createClaimsRepository(t.deps.database)
  const asked = { id: Number(id), endpoint: { id: Number(endpoint.id) } }
  expect(await claims.isStillOwn(asked, OWNER)).toBe(true)
  return { t, account, endpointId: endpointIdOf(Number(endpoint.id)), asked, claims }
}

it('an attempt read as its dispatcher’s before a DELETE does not start once the DELETE has answered', async (context) => {
  const { t, account, endpointId, asked, claims } = await heldAttempt(context)
  await t.deps.webhookEndpoints.remove(account, endpointId)
  expect(await claims.isStillOwn(asked, OWNER)).toBe(false)
})

it('nor once a disabling PATCH has answered', async (context) => {
  const { t, account, endpointId, asked, claims } = await heldAttempt(context)
  await t.deps.webhookEndpoints.patch(account, endpointId, { status: 'disabled' })
  expect(await claims.isStillOwn(asked, OWNER)).toBe(false)
})

it('nor once an operator’s disable has answered', async (context) => {
  const { t, asked, claims } = await heldAttempt(context)
  expect(await t.deps.webhookEndpoints.disable(asked.endpoint.id, 'disabled by the operators')).toBe(true)
  expect(await claims.isStillOwn(asked, OWNER)).toBe(false)
})
