import { type Selectable, sql } from 'kysely'
import type { Db, WebhookEndpointsTable } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { CIRCUIT_OPENS_AFTER } from './schedule.js'

export type EndpointRow = Selectable<WebhookEndpointsTable>

/** The last event id committed now (read in the writer's transaction): an endpoint takes later ones. */
export const lastEventSeq = () => sql<number>`(select coalesce(max(seq), 0) from events)`

/** What a new endpoint is made of (the service judged the URL and drew the secret). */
export interface EndpointFields {
  url: string
  events: readonly string[]
  description: string | null
}

export type EndpointsRepository = ReturnType<typeof createEndpointsRepository>

/** The only code that writes SQL for webhook endpoints; deleted endpoints are never read back. */
export function createEndpointsRepository(handle: DbHandle) {
  const live = (db: Db) => db.selectFrom('webhook_endpoints').selectAll().where('deleted_at', 'is', null)
  const own = (db: Db, apiKeyId: number) => live(db).where('api_key_id', '=', apiKeyId)
  const byId = handle.prepareRead((db, apiKeyId: number, id: number) =>
    own(db, apiKeyId).where('id', '=', id),
  )
  const page = handle.prepareRead((db, apiKeyId: number, afterId: number, limit: number) =>
    own(db, apiKeyId).where('id', '>', afterId).orderBy('id').limit(limit),
  )

  const circuitOpen = handle.prepareRead((db, threshold: number) =>
    db
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('status', '=', 'enabled')
      .where('deleted_at', 'is', null)
      .where('failures_in_row', '>=', threshold),
  )

  return {
    /** Enabled endpoints whose circuit is open (a metric). */
    async countCircuitOpen(): Promise<number> {
      const [row] = await circuitOpen(CIRCUIT_OPENS_AFTER)
      return Number(row?.count ?? 0)
    },
    /** The account's live endpoint; another account's is as absent as a missing one. */
    async find(apiKeyId: number, id: number): Promise<EndpointRow | undefined> {
      const [row] = await byId(apiKeyId, id)
      return row
    },
    findIn: (trx: Db, apiKeyId: number, id: number) =>
      own(trx, apiKeyId).where('id', '=', id).executeTakeFirst(),
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
    /** Every account's live endpoints (the operators' CLI), ascending id. */
    all: () => live(handle.db).orderBy('id').execute(),
  }
}
