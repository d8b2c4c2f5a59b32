import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { createAttemptsRepository } from './attempts.repository.js'
import { subscribes } from './schedule.js'

/** Events looked at per transaction. */
export const FAN_OUT_EVENTS = 200
/**
 * Attempts written per transaction at most, whatever the number of subscribers: an event with more
 * takers is fanned out over several transactions (`fan_out_after` keeps its place).
 */
export const FAN_OUT_ROWS = 2_000

/**
 * Events wait in the outbox (one row each) while every enabled endpoint has this many attempts due: a
 * write then costs one row, not one per subscriber, and the rows are written as the queues drain. One
 * hungry endpoint is enough to fan out, so no backlog, however long, holds back anyone else's events.
 */
export const FAN_OUT_AHEAD = 500

export type FanOutRepository = ReturnType<typeof createFanOutRepository>

/** An enabled endpoint as the fan-out judges it. */
interface Taker {
  id: number
  api_key_id: number
  enabled_after_seq: number
  /** Today's subscription. */
  patterns: string[]
  /** Earlier ones, oldest first: each in force for the events up to `untilSeq` since the one before. */
  earlier: { untilSeq: number; patterns: string[] }[]
}

/**
 * The outbox's reading side: events committed and not yet fanned out become one pending attempt per
 * endpoint that takes them, in the same transaction as the mark, so a crash never loses nor doubles one.
 * On PostgreSQL `FOR UPDATE SKIP LOCKED`: instances fanning out at once take disjoint events.
 */
export function createFanOutRepository(handle: DbHandle) {
  const queue = createAttemptsRepository(handle)
  const waiting = handle.prepareRead((db, limit: number) =>
    db.selectFrom('events').select('seq').where('fanned_out', '=', 0).orderBy('seq').limit(limit),
  )
  const enabledIds = handle.prepareRead((db) =>
    db
      .selectFrom('webhook_endpoints')
      .select('id')
      .where('status', '=', 'enabled')
      .where('deleted_at', 'is', null)
      .orderBy('id'),
  )
  // Whether the endpoint has FAN_OUT_AHEAD attempts due: reads that many index entries at most.
  const saturated = handle.prepareRead((db, endpointId: number, now: number) =>
    db
      .selectFrom('webhook_attempts')
      .select('id')
      .where('endpoint_id', '=', endpointId)
      .where('status', '=', 'pending')
      .where('due_at', '<=', now)
      .offset(FAN_OUT_AHEAD - 1)
      .limit(1),
  )
  const outbox = handle.prepareRead((db) =>
    db
      .selectFrom('events')
      .select((eb) => [eb.fn.countAll<number>().as('depth'), eb.fn.min('created_at').as('oldest')])
      .where('fanned_out', '=', 0),
  )
  const unpublished = handle.prepareRead((db) =>
    db
      .selectFrom('event_outbox')
      .select((eb) => [eb.fn.countAll<number>().as('depth'), eb.fn.min('created_at').as('oldest')]),
  )
  const anyUnpublished = handle.prepareRead((db) => db.selectFrom('event_outbox').select('id').limit(1))

  /**
   * Fans out waiting events, oldest first, writing at most FAN_OUT_ROWS attempts; how many events it
   * finished.
   */
  async function fanOut(trx: Db, now: number): Promise<number> {
    let query = trx
      .selectFrom('events')
      .select(['seq', 'type', 'api_key_id', 'fan_out_after'])
      .where('fanned_out', '=', 0)
      .orderBy('seq')
      .limit(FAN_OUT_EVENTS)
    if (handle.dialect === 'postgres') query = query.forUpdate().skipLocked()
    const events = await query.execute()
    if (events.length === 0) return 0
    const takers = await enabledEndpoints(trx, events[0]?.seq ?? 0, now)
    let budget = FAN_OUT_ROWS
    const done: number[] = []
    for (const event of events) {
      const all = takers.filter(
        (endpoint) =>
          endpoint.id > event.fan_out_after &&
          (event.api_key_id === null || event.api_key_id === endpoint.api_key_id) &&
          event.seq > endpoint.enabled_after_seq &&
          subscribes(patternsAt(endpoint, event.seq), event.type),
      )
      const part = all.slice(0, budget)
      await queue.schedule(
        trx,
        part.map((endpoint) => ({
          eventSeq: event.seq,
          endpointId: endpoint.id,
          attempt: 1,
          dueAt: now,
          redelivery: false,
        })),
      )
      budget -= part.length
      if (part.length < all.length) {
        const last = part.at(-1)
        if (last)
          await trx
            .updateTable('events')
            .set({ fan_out_after: last.id })
            .where('seq', '=', event.seq)
            .execute()
        break
      }
      done.push(event.seq)
      if (budget === 0) break
    }
    if (done.length > 0)
      await trx.updateTable('events').set({ fanned_out: 1 }).where('seq', 'in', done).execute()
    return done.length
  }

  return {
    fanOut,
    /** Whether any committed event waits to be fanned out (a cheap read before a write transaction). */
    async anyWaiting(): Promise<boolean> {
      return (await waiting(1)).length > 0
    },
    /**
     * Whether some enabled endpoint has fewer than FAN_OUT_AHEAD attempts due (retries due later do
     * not count): the first one found answers.
     */
    async anyHungry(now: number): Promise<boolean> {
      for (const { id } of await enabledIds()) {
        if ((await saturated(id, now)).length === 0) return true
      }
      return false
    },
    /** Whether events wait to be published (PostgreSQL: `publishEvents` numbers them). */
    async anyUnpublished(): Promise<boolean> {
      return (await anyUnpublished()).length > 0
    },
    /** Events not fanned out yet (published or not), and the commit time of the oldest (metrics). */
    async outbox(): Promise<{ depth: number; oldest: number | null }> {
      const rows = [...(await outbox()), ...(await unpublished())]
      const oldest = rows
        .map((row) => row.oldest)
        .filter((at) => at != null)
        .map(Number)
      return {
        depth: rows.reduce((sum, row) => sum + Number(row.depth), 0),
        oldest: oldest.length > 0 ? Math.min(...oldest) : null,
      }
    },
    /** Forgets earlier subscriptions that no event waiting to be fanned out can need any more. */
    async pruneSubscriptions(trx: Db): Promise<void> {
      const oldestWaiting = trx
        .selectFrom('events')
        .select((eb) => eb.fn.coalesce(eb.fn.min('seq'), eb.lit(Number.MAX_SAFE_INTEGER)).as('seq'))
        .where('fanned_out', '=', 0)
      await trx.deleteFrom('webhook_subscription_history').where('until_seq', '<', oldestWaiting).execute()
    },
    /**
     * Deletes events older than `before` that were fanned out, oldest first, at most `batch` rows; how
     * many. An event still waiting is kept, however old: its deliveries were promised at its commit.
     */
    async purgeEvents(trx: Db, before: number, batch: number): Promise<number> {
      const old = trx
        .selectFrom('events')
        .select('seq')
        .where('created_at', '<', before)
        .where('fanned_out', '=', 1)
        .orderBy('created_at')
        .limit(batch)
      const result = await trx.deleteFrom('events').where('seq', 'in', old).executeTakeFirst()
      return Number(result.numDeletedRows)
    },
  }
}

/**
 * Every enabled live endpoint of an account whose key still works, ascending id (an event's remaining takers follow its `fan_out_after`),
 * with its earlier subscriptions still in force for some event from `fromSeq` on.
 */
async function enabledEndpoints(trx: Db, fromSeq: number, now: number): Promise<Taker[]> {
  // An account whose key is revoked or expired takes no new events: nobody can read or change its endpoints.
  const rows = await trx
    .selectFrom('webhook_endpoints as e')
    .innerJoin('api_keys as k', 'k.id', 'e.api_key_id')
    .select(['e.id', 'e.api_key_id', 'e.events', 'e.enabled_after_seq'])
    .where('e.status', '=', 'enabled')
    .where('e.deleted_at', 'is', null)
    .where('k.revoked_at', 'is', null)
    .where((eb) => eb.or([eb('k.expires_at', 'is', null), eb('k.expires_at', '>', now)]))
    .orderBy('e.id')
    .execute()
  const history = await trx
    .selectFrom('webhook_subscription_history')
    .select(['endpoint_id', 'until_seq', 'events'])
    .where('until_seq', '>=', fromSeq)
    .orderBy('until_seq')
    .execute()
  return rows.map((row) => ({
    ...row,
    patterns: JSON.parse(row.events) as string[],
    earlier: history
      .filter((kept) => kept.endpoint_id === row.id)
      .map((kept) => ({ untilSeq: kept.until_seq, patterns: JSON.parse(kept.events) as string[] })),
  }))
}

/** The subscription in force when event `seq` committed: the earliest kept one that held for it, else today's. */
function patternsAt(taker: Taker, seq: number): string[] {
  return taker.earlier.find((kept) => kept.untilSeq >= seq)?.patterns ?? taker.patterns
}
