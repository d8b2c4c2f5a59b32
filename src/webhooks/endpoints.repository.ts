import { type Selectable, sql } from 'kysely'
import type { Db, WebhookEndpointsTable } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { lastEventSeq } from '../events/events.repository.js'

export type EndpointRow = Selectable<WebhookEndpointsTable>

/** What a new endpoint is made of (the service judged the URL and drew the secret). */
export interface EndpointFields {
  url: string
  events: readonly string[]
  description: string | null
}

/** An enabled endpoint as the fan-out judges an event for it. */
export interface Taker {
  id: number
  accountId: number
  enabledAfterSeq: number
  /** Today's subscription. */
  patterns: string[]
  /** Earlier ones, oldest first: each in force for the events up to `untilSeq` since the one before. */
  earlier: { untilSeq: number; patterns: string[] }[]
}

export type EndpointsRepository = ReturnType<typeof createEndpointsRepository>

/**
 * `status = 'enabled'`, written as a constant: with `deleted_at is null`, the condition of the index the
 * dispatchers read enabled endpoints along (`webhook_endpoints_enabled`), which SQLite uses only when a
 * query states it in the same terms (a bound parameter is not known to equal it).
 */
export const ENABLED = sql.lit('enabled')

/**
 * The SQL for webhook endpoints, but for their lease columns (`lease_owner`, `lease_until`), which
 * leases.repository.ts reads and writes (the dispatchers' hold on them), and their failing streak, which
 * circuits.repository.ts moves. Deleted endpoints are never read back.
 */
export function createEndpointsRepository(handle: DbHandle) {
  const live = (db: Db) => db.selectFrom('webhook_endpoints').selectAll().where('deleted_at', 'is', null)
  const own = (db: Db, apiKeyId: number) => live(db).where('api_key_id', '=', apiKeyId)
  const byId = handle.prepareRead((db, apiKeyId: number, id: number) =>
    own(db, apiKeyId).where('id', '=', id),
  )
  const page = handle.prepareRead((db, apiKeyId: number, afterId: number, limit: number) =>
    own(db, apiKeyId).where('id', '>', afterId).orderBy('id').limit(limit),
  )

  const enabledIds = handle.prepareRead((db) =>
    db
      .selectFrom('webhook_endpoints')
      .select('id')
      .where('status', '=', ENABLED)
      .where('deleted_at', 'is', null)
      .orderBy('id'),
  )

  return {
    /** Every enabled live endpoint's id, ascending. */
    enabledIds: async (): Promise<number[]> => (await enabledIds()).map((row) => row.id),
    /** Whether any live endpoint is enabled, read in `trx` (after the publishers' lock: publishEvents). */
    async anyEnabledIn(trx: Db): Promise<boolean> {
      const row = await trx
        .selectFrom('webhook_endpoints')
        .select('id')
        .where('status', '=', ENABLED)
        .where('deleted_at', 'is', null)
        .limit(1)
        .executeTakeFirst()
      return row !== undefined
    },
    /**
     * Every enabled live endpoint of an account whose key still works at `now` (revoked or expired: nobody
     * can read or change its endpoints), ascending id, with its earlier subscriptions still in force for
     * some event from `fromSeq` on, oldest first.
     */
    async takersIn(trx: Db, fromSeq: number, now: number): Promise<Taker[]> {
      const rows = await trx
        .selectFrom('webhook_endpoints as e')
        .innerJoin('api_keys as k', 'k.id', 'e.api_key_id')
        .select(['e.id', 'e.api_key_id', 'e.events', 'e.enabled_after_seq'])
        .where('e.status', '=', ENABLED)
        .where('e.deleted_at', 'is', null)
        .where('k.revoked_at', 'is', null)
        .where((eb) => eb.or([eb('k.expires_at', 'is', null), eb('k.expires_at', '>', now)]))
        .orderBy('e.id')
        .execute()
      const history = await trx
        .selectFrom('webhook_subscription_history')
        .select(['endpoint_id', 'until_seq', 'events'])
        .where('until_seq', '>=', fromSeq)
        // Two PATCHes with no event between keep two rows with one until_seq: the first held at its events.
        .orderBy('until_seq')
        .orderBy('id')
        .execute()
      return rows.map((row) => ({
        id: row.id,
        accountId: row.api_key_id,
        enabledAfterSeq: row.enabled_after_seq,
        patterns: JSON.parse(row.events) as string[],
        earlier: history
          .filter((kept) => kept.endpoint_id === row.id)
          .map((kept) => ({ untilSeq: kept.until_seq, patterns: JSON.parse(kept.events) as string[] })),
      }))
    },
    /** Forgets the earlier subscriptions that held only for events before `seq` (all fanned out). */
    async forgetSubscriptionsBefore(trx: Db, seq: number): Promise<void> {
      await trx.deleteFrom('webhook_subscription_history').where('until_seq', '<', seq).execute()
    },
    /**
     * The account's enabled live endpoints with their subscriptions (a redelivery's targets), their rows
     * locked to the end of `trx` on PostgreSQL, in id order, as `lockOwnIn` locks one.
     */
    lockEnabledOfAccount(trx: Db, apiKeyId: number) {
      const query = trx
        .selectFrom('webhook_endpoints')
        .select(['id', 'events'])
        .where('api_key_id', '=', apiKeyId)
        .where('status', '=', ENABLED)
        .where('deleted_at', 'is', null)
        .orderBy('id')
      return (handle.dialect === 'postgres' ? query.forUpdate() : query).execute()
    },
    /** The account's live endpoint; another account's is as absent as a missing one. */
    async find(apiKeyId: number, id: number): Promise<EndpointRow | undefined> {
      const [row] = await byId(apiKeyId, id)
      return row
    },
    /**
     * The account's live endpoint, its row locked to the end of `trx` on PostgreSQL (SQLite has one writer
     * at a time): a disabling PATCH or a DELETE then waits for the attempts written after this, or commits
     * first and is seen.
     */
    lockOwnIn(trx: Db, apiKeyId: number, id: number) {
      const query = own(trx, apiKeyId).where('id', '=', id)
      return (handle.dialect === 'postgres' ? query.forUpdate() : query).executeTakeFirst()
    },
    /** Keyset page of the account's endpoints after `afterId`, ascending. */
    page: (apiKeyId: number, afterId: number, limit: number) => page(apiKeyId, afterId, limit),
    /** The account's live endpoints (the cap counts them). */
    async countIn(trx: Db, apiKeyId: number): Promise<number> {
      const row = await trx
        .selectFrom('webhook_endpoints')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('api_key_id', '=', apiKeyId)
        .where('deleted_at', 'is', null)
        .executeTakeFirstOrThrow()
      return Number(row.count)
    },
    async insert(trx: Db, apiKeyId: number, fields: EndpointFields, secret: string, now: number) {
      return trx
        .insertInto('webhook_endpoints')
        .values({
          api_key_id: apiKeyId,
          url: fields.url,
          events: JSON.stringify(fields.events),
          description: fields.description,
          status: 'enabled',
          secret,
          enabled_after_seq: lastEventSeq(),
          created_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow()
    },
    /** Sets the columns given on the live endpoint; the row as it is then. */
    async update(trx: Db, id: number, changes: Partial<Omit<EndpointRow, 'id' | 'api_key_id'>>) {
      if (Object.keys(changes).length === 0) {
        return trx.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst()
      }
      return trx
        .updateTable('webhook_endpoints')
        .set(changes)
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .returningAll()
        .executeTakeFirst()
    },
    /** Enabled again: it takes the events that commit from now on, and the five-day rule starts afresh. */
    async reenable(trx: Db, id: number): Promise<void> {
      await trx
        .updateTable('webhook_endpoints')
        .set({
          status: 'enabled',
          enabled_after_seq: lastEventSeq(),
          disabled_reason: null,
          failing_since: null,
          failures_in_row: 0,
          sweep_until: null,
        })
        .where('id', '=', id)
        .execute()
    },
    /**
     * Keeps the subscription an endpoint had until now (`events`, JSON) for the events committed so far
     * that are not fanned out yet: they are judged by it, not by the one that replaces it.
     */
    async keepSubscription(trx: Db, id: number, events: string): Promise<void> {
      await trx
        .insertInto('webhook_subscription_history')
        .values({ endpoint_id: id, until_seq: lastEventSeq(), events })
        .execute()
    },
    /** Every live endpoint, with its account's key's revocation and expiry (operators' list), by id. */
    all: () =>
      handle.db
        .selectFrom('webhook_endpoints as e')
        .innerJoin('api_keys as k', 'k.id', 'e.api_key_id')
        .selectAll('e')
        .select(['k.revoked_at as key_revoked_at', 'k.expires_at as key_expires_at'])
        .where('e.deleted_at', 'is', null)
        .orderBy('e.id')
        .execute(),
  }
}
