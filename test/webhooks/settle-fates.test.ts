import { randomUUID } from 'node:crypto'
import { beforeEach, expect, it } from 'vitest'
import { endpointIdOf } from '../../src/webhooks/endpoints.service.js'
import { ownerIdOf } from '../../src/webhooks/owner.js'
import { FAILING_DISABLES_AFTER_MS } from '../../src/webhooks/schedule.js'
import { createSettler } from '../../src/webhooks/settle.js'
import { build, type TestApp } from '../helpers.js'
import { answered, endedAttempts, endpointsOf } from './ended-harness.js'

/**
 * What a step's failures come to when they are written down together: each endpoint's streak moved once
 * for all of its failures, then each failure's fate from its endpoint as that left it, in the order the
 * attempts ended.
 */

let t: TestApp
let account: number
let ids: number[]
let now: number
const owner = ownerIdOf(randomUUID())

beforeEach(async (context) => {
  t = await build(context)
  account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
  now = t.clock.now()
  ids = await endpointsOf(t.deps.database.db, account, 4, now)
})

/**
 * Writes down attempts to endpoint `ids[n]` that ended with these answers, in one step, after `meanwhile`
 * (what happened while they were in flight); how each counts.
 */
async function settle(
  answers: readonly [n: number, httpStatus: number, startedAt?: number][],
  holder = owner,
  meanwhile = async () => {},
) {
  const ended = await endedAttempts(
    t.deps.database.db,
    holder,
    answers.map(([n, status, startedAt]) => ({
      endpointId: ids[n] ?? 0,
      outcome: answered(status, startedAt ?? now),
    })),
    now,
  )
  await meanwhile()
  const settler = createSettler(t.deps.database, { retryScale: 1 })
  return t.deps.database.write((trx) => settler.settleAll(trx, ended, owner, now))
}

const endpoint = (n: number) =>
  t.deps.database.db
    .selectFrom('webhook_endpoints')
    .select(['status', 'disabled_reason', 'failures_in_row', 'failing_since'])
    .where('id', '=', ids[n] ?? 0)
    .executeTakeFirstOrThrow()

const pendingOf = async (n: number) =>
  (
    await t.deps.database.db
      .selectFrom('webhook_attempts')
      .select('attempt')
      .where('endpoint_id', '=', ids[n] ?? 0)
      .where('status', '=', 'pending')
      .execute()
  ).map((row) => row.attempt)

it('disables an endpoint that answered 410 once and retries none of its failures, whether they ended before or after the 410', async () => {
  const settled = await settle([
    [0, 500],
    [1, 410],
    [2, 503],
    [0, 410],
    [1, 500],
    [0, 500],
  ])
  expect(settled).toEqual(['failed', 'failed', 'retried', 'failed', 'failed', 'failed'])
  for (const n of [0, 1]) {
    expect(await endpoint(n)).toMatchObject({
      status: 'disabled',
      disabled_reason: 'the endpoint answered 410 Gone',
    })
    expect(await pendingOf(n)).toEqual([])
  }
  expect(await endpoint(2)).toMatchObject({ status: 'enabled', failures_in_row: 1, failing_since: now })
  expect(await pendingOf(2)).toEqual([2])
})

it('counts every failure of a step in its endpoint’s streak, from the earliest, and a success in the same step closes the circuit', async () => {
  const settled = await settle([
    [0, 500, now - 10],
    [1, 500, now - 20],
    [0, 500, now - 30],
    [1, 204, now - 5],
    [0, 502, now - 20],
  ])
  expect(settled).toEqual(['retried', 'retried', 'retried', 'succeeded', 'retried'])
  expect(await endpoint(0)).toMatchObject({ failures_in_row: 3, failing_since: now - 30 })
  expect(await endpoint(1)).toMatchObject({ failures_in_row: 0, failing_since: null })
  expect(await pendingOf(0)).toEqual([2, 2, 2])
})

it('disables an endpoint once its failures have lasted five days, and retries none of them', async () => {
  await t.deps.database.db
    .updateTable('webhook_endpoints')
    .set({ failing_since: now - FAILING_DISABLES_AFTER_MS, failures_in_row: 40 })
    .where('id', 'in', [ids[0] ?? 0, ids[1] ?? 0])
    .execute()
  await t.deps.database.db
    .updateTable('webhook_endpoints')
    .set({ failing_since: now - FAILING_DISABLES_AFTER_MS + 1 })
    .where('id', '=', ids[1] ?? 0)
    .execute()
  expect(
    await settle([
      [0, 500],
      [1, 500],
      [0, 500],
    ]),
  ).toEqual(['failed', 'retried', 'failed'])
  expect(await endpoint(0)).toMatchObject({
    status: 'disabled',
    disabled_reason: expect.stringMatching(/5 days/),
  })
  expect(await pendingOf(0)).toEqual([])
  expect(await endpoint(1)).toMatchObject({ status: 'enabled', failures_in_row: 41 })
})

it('writes nothing of an attempt another dispatcher took over, and counts it lost', async () => {
  const settled = await settle([[3, 500]], ownerIdOf(randomUUID()))
  expect(settled).toEqual(['lost'])
  expect(await endpoint(3)).toMatchObject({ failures_in_row: 0, failing_since: null })
  expect(await pendingOf(3)).toEqual([1])
})

it('writes an attempt that a disable ended while it was in flight as it came, and nothing follows it, though a re-enable came before its end', async () => {
  const disabledAndEnabled = async () => {
    for (const n of [0, 1]) {
      for (const status of ['disabled', 'enabled'] as const)
        await t.deps.webhookEndpoints.patch(account, endpointIdOf(ids[n] ?? 0), { status })
    }
    // Endpoint 1 failed twice since its re-enable: its new streak.
    await t.deps.database.db
      .updateTable('webhook_endpoints')
      .set({ failures_in_row: 2, failing_since: now - 5 })
      .where('id', '=', ids[1] ?? 0)
      .execute()
  }
  expect(
    await settle(
      [
        [0, 500],
        [1, 204],
      ],
      owner,
      disabledAndEnabled,
    ),
  ).toEqual(['failed', 'succeeded'])
  // Not retried, and neither streak moved: the failure does not start endpoint 0's, the success does not
  // end endpoint 1's.
  expect(await pendingOf(0)).toEqual([])
  expect(await endpoint(0)).toMatchObject({ status: 'enabled', failures_in_row: 0, failing_since: null })
  expect(await endpoint(1)).toMatchObject({ status: 'enabled', failures_in_row: 2, failing_since: now - 5 })
  // The delivery log shows each as it came, held by nobody.
  const rows = await t.deps.database.db
    .selectFrom('webhook_attempts')
    .select(['status', 'http_status', 'lease_token'])
    .orderBy('id')
    .execute()
  expect(rows).toEqual([
    { status: 'failed', http_status: 500, lease_token: null },
    { status: 'succeeded', http_status: 204, lease_token: null },
  ])
})
