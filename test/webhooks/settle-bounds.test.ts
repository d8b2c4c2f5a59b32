import { randomUUID } from 'node:crypto'
import { expect, it } from 'vitest'
import { ownerIdOf } from '../../src/webhooks/owner.js'
import { SETTLED_PER_STEP } from '../../src/webhooks/step.js'
import { build, onServices, type TestApp } from '../helpers.js'
import { answered, countingStatements, endedAttempts, endpointsOf } from './ended-harness.js'
import { settlingStepOf, stepOf } from './step-harness.js'

/**
 * A step writes down what ended since the one before inside its transaction, which has the database's
 * deadline and renews the leases. When one partner's endpoints all fail at once, that is many failures a
 * step: each moves its endpoint's failing streak and schedules a retry. Written one by one (two round
 * trips each on PostgreSQL), 2,000 of them outlasted the deadline, the step was tried again with more, and
 * the instance stopped delivering. Now a step's failures take a few statements however many there are,
 * and a step writes down at most SETTLED_PER_STEP of them, leaving the rest, in order, to the next.
 */

const ENDPOINTS = 3

/** `count` attempts to ENDPOINTS endpoints, in turn, that ended with a 500; the step that writes them. */
async function failuresToSettle(t: TestApp, count: number, handle = t.deps.database) {
  const { db } = t.deps.database
  const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
  const now = t.clock.now()
  const ids = await endpointsOf(db, account, ENDPOINTS, now)
  const owner = ownerIdOf(randomUUID())
  const answers = Array.from({ length: count }, (_, n) => ({
    endpointId: ids[n % ENDPOINTS] ?? 0,
    outcome: answered(500, now),
  }))
  const ended = await endedAttempts(db, owner, answers, now)
  const dispatcher = settlingStepOf(handle, owner, t.clock)
  dispatcher.lanes.giveBackEnded(ended)
  return { dispatcher, ended, ids }
}

/** Attempts of `t`'s database: the ids of those written down as failed, and how many retries are pending. */
async function attemptsOf(t: TestApp) {
  const rows = await t.deps.database.db
    .selectFrom('webhook_attempts')
    .select(['id', 'status', 'attempt'])
    .orderBy('id')
    .execute()
  return {
    failed: rows.filter((row) => row.status === 'failed' && row.attempt === 1).map((row) => row.id),
    retries: rows.filter((row) => row.status === 'pending' && row.attempt === 2).length,
  }
}

const streaksOf = async (t: TestApp) =>
  (
    await t.deps.database.db.selectFrom('webhook_endpoints').select('failures_in_row').orderBy('id').execute()
  ).map((row) => row.failures_in_row)

it('writes down a step’s failures of a few endpoints in as many statements for 300 as for 30', async (context) => {
  const statementsFor = async (count: number) => {
    const t = await build(context)
    const counting = countingStatements(t.deps.database)
    const { dispatcher } = await failuresToSettle(t, count, counting.handle)
    await dispatcher.step(false)
    expect((await attemptsOf(t)).retries).toBe(count)
    expect(await streaksOf(t)).toEqual(Array(ENDPOINTS).fill(count / ENDPOINTS))
    return counting.statements()
  }
  const many = await statementsFor(300)
  const few = await statementsFor(30)
  // On SQLite every write of a step is one compiled statement run per row (`prepareWrite`), which the
  // counter does not see: the count says something on PostgreSQL, where a statement is a round trip.
  if (onServices) expect(many).toBe(few)
})

it(`writes down at most ${SETTLED_PER_STEP.toLocaleString('en')} outcomes a step and says there is more; the next step writes the rest, each once`, async (context) => {
  const t = await build(context)
  const total = SETTLED_PER_STEP + 300
  const { dispatcher, ended } = await failuresToSettle(t, total)
  const order = ended.map((end) => end.claimed.id)

  expect(await dispatcher.step(false)).toMatchObject({ busy: true, more: true })
  const first = await attemptsOf(t)
  // The oldest first: those that ended first are written down first.
  expect(first.failed).toEqual(order.slice(0, SETTLED_PER_STEP))
  expect(first.retries).toBe(SETTLED_PER_STEP)

  expect(await dispatcher.step(false)).toMatchObject({ busy: true, more: false })
  const second = await attemptsOf(t)
  expect(second.failed).toEqual(order)
  expect(second.retries).toBe(total)
  expect((await streaksOf(t)).reduce((sum, streak) => sum + streak, 0)).toBe(total)
  expect(await dispatcher.step(false)).toEqual({ busy: false, more: false })
})

it('keeps the lease and the hold of an idle lane whose outcomes the bound left for the next step: none is given back to be sent again', async (context) => {
  const t = await build(context)
  const { db } = t.deps.database
  const now = t.clock.now()
  const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
  const [endpoint = 0] = await endpointsOf(db, account, 1, now)
  const owner = ownerIdOf(randomUUID())
  // The endpoint leased by `owner` (far ahead), its lane idle for long: a lane a step lets go.
  await db
    .updateTable('webhook_endpoints')
    .set({ lease_owner: owner, lease_until: Number.MAX_SAFE_INTEGER })
    .where('id', '=', endpoint)
    .execute()
  const total = SETTLED_PER_STEP + 300
  const answers = Array.from({ length: total }, () => ({ endpointId: endpoint, outcome: answered(500, now) }))
  const ended = await endedAttempts(db, owner, answers, now)
  const dispatcher = stepOf(t.deps.database, owner, [{ id: endpoint, accountId: account }], t.clock, 0)
  dispatcher.lanes.giveBackEnded(ended)
  await dispatcher.step(false)
  await dispatcher.step(false)
  // Every outcome written by the instance that held it, none taken back and lost on the way.
  expect((await attemptsOf(t)).failed).toEqual(ended.map((end) => end.claimed.id))
})
