import { expect, it } from 'vitest'
import type { DbHandle } from '../../src/db/handle.js'
import { createDispatcher } from '../../src/webhooks/dispatcher.js'
import { ENDPOINTS_PER_STEP } from '../../src/webhooks/step.js'
import { build } from '../helpers.js'
import { endpointRow, insertEndpointRows, loopbackResolve, startReceiver } from './harness.js'

const ENDPOINTS = 250

/**
 * A step's transaction runs on the event loop that serves requests (SQLite): however many endpoints have
 * something due, one step leases at most ENDPOINTS_PER_STEP of them and refills at most as many lanes
 * besides the ones it just leased; the others are served by the next steps, in turn.
 */
it(`leases at most ENDPOINTS_PER_STEP endpoints a step and refills at most as many lanes besides; ${ENDPOINTS} subscribed endpoints all receive the event once`, async (context) => {
  const t = await build(context)
  const receiver = await startReceiver()
  context.onTestFinished(() => receiver.close())
  const { database } = t.deps
  const { db } = database
  const now = t.clock.now()
  const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
  // Rows written straight to the table: far past the API's 10 endpoints per account.
  const endpoints = Array.from({ length: ENDPOINTS }, (_, index) =>
    endpointRow(account, `http://hooks.test:${receiver.port}/e${index}`, '["pet.*"]', now),
  )
  await insertEndpointRows(db, endpoints)
  const event = { type: 'pet.created', api_key_id: null, resource_version: 1, object: '{}', created_at: now }
  await db.insertInto('events').values(event).execute()

  /** After each of the dispatcher's transactions: endpoints leased, endpoints with an attempt taken. */
  const counts = async () => {
    const leased = await db
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('lease_owner', 'is not', null)
      .executeTakeFirstOrThrow()
    const taken = await db
      .selectFrom('webhook_attempts')
      .select((eb) => eb.fn.count<number>('endpoint_id').distinct().as('n'))
      .where((eb) => eb.or([eb('lease_token', 'is not', null), eb('status', '<>', 'pending')]))
      .executeTakeFirstOrThrow()
    return { leased: Number(leased.n), taken: Number(taken.n) }
  }
  const after: { leased: number; taken: number }[] = [await counts()]
  const counted: DbHandle = {
    ...database,
    write: async (work) => {
      const result = await database.write(work)
      after.push(await counts())
      return result
    },
  }
  const dispatcher = createDispatcher({
    handle: counted,
    logger: t.deps.logger,
    rules: { allowPrivate: true, allowHttp: true, resolve: loopbackResolve },
    timeoutMs: 5_000,
    retryScale: 1,
    clock: t.clock,
  })
  dispatcher.start()
  try {
    await receiver.waitFor(ENDPOINTS, 20_000)
    await dispatcher.whenIdle()
  } finally {
    await dispatcher.stop(0)
  }

  expect(receiver.received).toHaveLength(ENDPOINTS)
  const succeeded = await db
    .selectFrom('webhook_attempts')
    .select('endpoint_id')
    .distinct()
    .where('status', '=', 'succeeded')
    .execute()
  expect(succeeded).toHaveLength(ENDPOINTS)
  const steps = after.slice(1).map((now, index) => ({
    leased: now.leased - (after[index]?.leased ?? 0),
    taken: now.taken - (after[index]?.taken ?? 0),
  }))
  expect(Math.max(...steps.map((step) => step.leased))).toBe(ENDPOINTS_PER_STEP)
  expect(Math.max(...steps.map((step) => step.taken))).toBeLessThanOrEqual(2 * ENDPOINTS_PER_STEP)
})
