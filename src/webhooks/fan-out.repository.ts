import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { createAttemptsRepository } from './attempts.repository.js'
import { subscribes } from './schedule.js'

/** Events made into deliveries per transaction. */
const FAN_OUT_BATCH = 200

export type FanOutRepository = ReturnType<typeof createFanOutRepository>

/**
 * The outbox's reading side: events committed and not yet fanned out become one pending attempt per
 * endpoint that takes them, in one transaction with the mark, so a crash fans out an event wholly or not.
 * On PostgreSQL `FOR UPDATE SKIP LOCKED`: instances fanning out at once take disjoint events.
 */
export function createFanOutRepository(handle: DbHandle) {
  const queue = createAttemptsRepository(handle)
  const waiting = handle.prepareRead((db, limit: number) =>
    db.selectFrom('events').select('seq').where('fanned_out', '=', 0).limit(limit),
  )

  /** The deliveries of up to FAN_OUT_BATCH waiting events; how many events it fanned out. */
  async function fanOut(trx: Db, now: number): Promise<number> {
    let query = trx
      .selectFrom('events')
      .select(['seq', 'type', 'api_key_id', 'created_at'])
      .where('fanned_out', '=', 0)
      .orderBy('seq')
      .limit(FAN_OUT_BATCH)
    if (handle.dialect === 'postgres') query = query.forUpdate().skipLocked()
    const events = await query.execute()
    if (events.length === 0) return 0
    const endpoints = (
      await trx
        .selectFrom('webhook_endpoints')
        .select(['id', 'api_key_id', 'events', 'enabled_after_seq'])
        .where('status', '=', 'enabled')
        .where('deleted_at', 'is', null)
        .execute()
    ).map((endpoint) => ({ ...endpoint, patterns: JSON.parse(endpoint.events) as string[] }))
    const attempts = events.flatMap((event) =>
      endpoints
        .filter(
          (endpoint) =>
            (event.api_key_id === null || event.api_key_id === endpoint.api_key_id) &&
            event.seq > endpoint.enabled_after_seq &&
            subscribes(endpoint.patterns, event.type),
        )
        .map((endpoint) => ({
          eventSeq: event.seq,
          endpointId: endpoint.id,
          attempt: 1,
          dueAt: now,
          redelivery: false,
        })),
    )
    await queue.schedule(trx, attempts)
    const seqs = events.map((event) => event.seq)
    await trx.updateTable('events').set({ fanned_out: 1 }).where('seq', 'in', seqs).execute()
    return events.length
  }

  return {
    fanOut,
    /** Whether any committed event waits to be fanned out (a cheap read before a write transaction). */
    async anyWaiting(): Promise<boolean> {
      return (await waiting(1)).length > 0
    },
    /** Deletes events older than `before`, at most `batch` rows; how many it deleted. */
    async purgeEvents(trx: Db, before: number, batch: number): Promise<number> {
      const old = trx.selectFrom('events').select('seq').where('created_at', '<', before).limit(batch)
      const result = await trx.deleteFrom('events').where('seq', 'in', old).executeTakeFirst()
      return Number(result.numDeletedRows)
    },
  }
}
