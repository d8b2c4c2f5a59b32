import { expect, it } from 'vitest'
import { HOLD_MS, MAX_LANES } from '../../src/webhooks/step.js'
import { build, onServices } from '../helpers.js'
import { endpointsWithDueAttempts } from './harness.js'
import { stepOf } from './step-harness.js'

/**
 * An instance sends to MAX_LANES endpoints at once. With more endpoints that always have work (their
 * queues never empty, or their requests hang), those it holds are never idle, so without a rotation the
 * others would never be leased by it: the lanes held longest make room (after HOLD_MS), one for each
 * endpoint that waits, their queued attempts given back, and are let go once idle.
 */
// SQLite: on PostgreSQL leases and due times are on the database server's clock, which a test cannot move
// (the step's bookkeeping that this checks is the same on either store).
it.skipIf(onServices)(
  'at MAX_LANES, endpoints that wait are leased in turn: the lanes held longest make room',
  async (context) => {
    const t = await build(context)
    const handle = t.deps.database
    const { db } = handle
    const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
    const start = t.clock.now()
    const extra = 6
    const { ids, seq } = await endpointsWithDueAttempts(db, account, MAX_LANES + extra, start)
    const owner = 'host/1/rotation'
    // Lanes that never send: each keeps its attempt queued, so none is ever idle by itself.
    const step = stepOf(handle, owner, [], t.clock)
    const leased = () =>
      db
        .selectFrom('webhook_endpoints')
        .select('id')
        .where('lease_owner', '=', owner)
        .execute()
        .then((held) => new Set(held.map((row) => row.id)))
    for (let n = 0; n < 20; n++) await step.step(true)
    const first = await leased()
    expect(first.size).toBe(MAX_LANES)
    const waiting = ids.filter((id) => !first.has(id))
    expect(waiting).toHaveLength(extra)
    // Held for less than HOLD_MS: nobody makes room yet.
    t.clock.advance(HOLD_MS / 2)
    for (let n = 0; n < 5; n++) await step.step(true)
    expect(await leased()).toEqual(first)
    // The lanes held longest have more to take: making room, they take none of it.
    const longest = ids.filter((id) => first.has(id)).slice(0, extra)
    await db
      .insertInto('webhook_attempts')
      .values(
        longest.map((id) => ({
          event_seq: seq,
          endpoint_id: id,
          attempt: 2,
          status: 'pending',
          due_at: start,
          at: start,
        })),
      )
      .execute()
    // Past it: as many lanes as endpoints wait make room (not one more: those let go do not count as
    // waiting), and those are leased.
    t.clock.advance(HOLD_MS)
    for (let n = 0; n < 5; n++) await step.step(true)
    const second = await leased()
    expect(second.size).toBe(MAX_LANES)
    for (const id of waiting) expect(second.has(id)).toBe(true)
    const madeRoom = [...first].filter((id) => !second.has(id))
    expect(madeRoom).toHaveLength(extra)
    // Their attempts were given back, pending for whoever leases them next.
    const given = await db
      .selectFrom('webhook_attempts')
      .select(['status', 'lease_token'])
      .where('endpoint_id', 'in', madeRoom)
      .execute()
    expect(madeRoom.sort((a, b) => a - b)).toEqual(longest)
    expect(given).toHaveLength(2 * extra)
    for (const attempt of given) expect(attempt).toEqual({ status: 'pending', lease_token: null })
  },
  60_000,
)
