import { randomUUID } from 'node:crypto'
import { expect, it } from 'vitest'
import type { DbHandle } from '../../src/db/handle.js'
import { ownerIdOf } from '../../src/webhooks/owner.js'
import { build, onServices, type TestApp } from '../helpers.js'
import { endpointsWithDueAttempts } from './harness.js'
import { sendingStepOf } from './step-harness.js'

/**
 * A step whose transaction committed but whose caller heard an error (PostgreSQL: the COMMIT reached the
 * server, then its deadline ran out or the connection dropped before the answer): the leases it took and
 * the attempts it took for its lanes are in the database, unknown to the lanes. Nothing stays stuck: the
 * next step renews and takes those leases back as lanes, and lanes that may hold attempts they never
 * queued go once idle, which gives those attempts back.
 * SQLite only: the steps run on a fake clock, and on PostgreSQL leases and due times are the server's.
 */

/** `handle`, but its next write throws after committing, while `failNext()` was asked for. */
function committingThenFailing(handle: DbHandle) {
  let fail = false
  const unsure: DbHandle = {
    ...handle,
    write: async (work) => {
      const result = await handle.write(work)
      if (fail) {
        fail = false
        throw new Error('the connection was lost after COMMIT')
      }
      return result
    },
  }
  return { unsure, failNext: () => (fail = true) }
}

/** Steps `owner`'s dispatcher (and `others`) `times` times, the clock 500 ms on each time. */
async function stepFor(t: TestApp, times: number, ...steps: { step(claim: boolean): Promise<unknown> }[]) {
  for (let n = 0; n < times; n++) {
    t.clock.advance(500)
    for (const each of steps) await each.step(true).catch(() => {})
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

const statusesOf = async (t: TestApp, endpointIds: readonly number[]) =>
  (
    await t.deps.database.db
      .selectFrom('webhook_attempts')
      .select('status')
      .where('endpoint_id', 'in', [...endpointIds])
      .execute()
  ).map((row) => row.status)

it.skipIf(onServices)(
  'sends what a step took when its commit happened but was reported failed: the leases and attempts come back',
  async (context) => {
    const t = await build(context)
    const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
    const { ids } = await endpointsWithDueAttempts(t.deps.database.db, account, 2, t.clock.now())
    const { unsure, failNext } = committingThenFailing(t.deps.database)
    const dispatcher = sendingStepOf(unsure, ownerIdOf(randomUUID()), t.clock)
    failNext()
    await expect(dispatcher.step(true)).rejects.toThrow(/after COMMIT/)
    await stepFor(t, 10, dispatcher)
    expect(dispatcher.sent).toHaveLength(2)
    expect(await statusesOf(t, ids)).toEqual(['succeeded', 'succeeded'])
  },
)

it.skipIf(onServices)(
  "sends what a refill of a lane already held took when that step's commit was reported failed, while new events keep coming",
  async (context) => {
    const t = await build(context)
    const db = t.deps.database.db
    const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
    const { unsure, failNext } = committingThenFailing(t.deps.database)
    const dispatcher = sendingStepOf(unsure, ownerIdOf(randomUUID()), t.clock)
    await endpointsWithDueAttempts(db, account, 1, t.clock.now())
    await stepFor(t, 2, dispatcher)
    expect(dispatcher.sent).toHaveLength(1)
    // A second event for that endpoint (and a new one): the refill that takes it is the step that fails.
    await endpointsWithDueAttempts(db, account, 1, t.clock.now())
    failNext()
    await expect(dispatcher.step(true)).rejects.toThrow(/after COMMIT/)
    const lost = (
      await db.selectFrom('webhook_attempts').select('id').where('status', '=', 'pending').execute()
    )
      .map((row) => row.id)
      .filter((id) => !dispatcher.sent.includes(id))
    expect(lost.length).toBeGreaterThan(0)
    // An event every half second: the lane never stays idle for long, and the attempts it never queued
    // must not wait for it to.
    for (let n = 0; n < 10; n++) {
      await endpointsWithDueAttempts(db, account, 1, t.clock.now())
      await stepFor(t, 1, dispatcher)
    }
    const statuses = await db
      .selectFrom('webhook_attempts')
      .select('status')
      .where('id', 'in', lost)
      .execute()
    expect(statuses.map((row) => row.status)).toEqual(lost.map(() => 'succeeded'))
  },
)

it.skipIf(onServices)(
  'takes back leases it was not known to hold while another lane stays busy, so another instance is not kept out for good',
  async (context) => {
    const t = await build(context)
    const db = t.deps.database.db
    const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
    const {
      ids: [hung],
    } = await endpointsWithDueAttempts(db, account, 1, t.clock.now())
    const { unsure, failNext } = committingThenFailing(t.deps.database)
    const dispatcher = sendingStepOf(unsure, ownerIdOf(randomUUID()), t.clock, (id) => id === hung)
    await dispatcher.step(true)
    const { ids } = await endpointsWithDueAttempts(db, account, 2, t.clock.now())
    failNext()
    await expect(dispatcher.step(true)).rejects.toThrow(/after COMMIT/)
    const other = sendingStepOf(t.deps.database, ownerIdOf(randomUUID()), t.clock)
    await stepFor(t, 20, dispatcher, other)
    expect(await statusesOf(t, ids.slice(1))).toEqual(['succeeded', 'succeeded'])
  },
)
