import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'

/** What a request made: a pet, or an order. */
export type Made = { petId: number } | { orderId: number }

/** What a request made, and the body it answered with: a replay returns that body as it was. */
export interface FirstResponse {
  made: Made
  /** JSON; null in records from before migration 0010, which kept only what was made. */
  body: string | null
}

/** What an earlier request with the same API key and Idempotency-Key left. */
export interface IdempotencyRecord {
  requestHash: string
  /** Null only inside the transaction that makes the thing: never visible to another request. */
  first: FirstResponse | null
  createdAt: number
}

export interface IdempotencyClaim {
  apiKeyId: number
  key: string
  requestHash: string
  createdAt: number
}

export type IdempotencyRepository = ReturnType<typeof createIdempotencyRepository>

/** The SQL of idempotency records: every call runs in the operation's transaction, but the purge. */
export function createIdempotencyRepository(handle: Pick<DbHandle, 'write'>) {
  const ofKey = (apiKeyId: number, key: string) => (trx: Db) =>
    trx.updateTable('idempotency_keys').where('api_key_id', '=', apiKeyId).where('key', '=', key)

  return {
    /**
     * Inserts the record unless one exists for this API key and Idempotency-Key. True when this call
     * inserted it. A concurrent claim in another transaction waits on the unique key until this one ends.
     */
    async claim(trx: Db, claim: IdempotencyClaim): Promise<boolean> {
      const result = await trx
        .insertInto('idempotency_keys')
        .values({
          api_key_id: claim.apiKeyId,
          key: claim.key,
          request_hash: claim.requestHash,
          pet_id: null,
          order_id: null,
          created_at: claim.createdAt,
        })
        .onConflict((conflict) => conflict.columns(['api_key_id', 'key']).doNothing())
        .executeTakeFirst()
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n
    },

    async find(trx: Db, apiKeyId: number, key: string): Promise<IdempotencyRecord | undefined> {
      const row = await trx
        .selectFrom('idempotency_keys')
        .select(['request_hash', 'pet_id', 'order_id', 'created_at', 'response'])
        .where('api_key_id', '=', apiKeyId)
        .where('key', '=', key)
        .executeTakeFirst()
      if (!row) return undefined
      const made =
        row.pet_id !== null ? { petId: row.pet_id } : row.order_id !== null ? { orderId: row.order_id } : null
      const first = made && { made, body: row.response }
      return { requestHash: row.request_hash, first, createdAt: row.created_at }
    },

    /** Starts an expired record afresh for a new request. */
    async reclaim(trx: Db, claim: IdempotencyClaim): Promise<void> {
      await ofKey(
        claim.apiKeyId,
        claim.key,
      )(trx)
        .set({
          request_hash: claim.requestHash,
          pet_id: null,
          order_id: null,
          created_at: claim.createdAt,
          response: null,
        })
        .execute()
    },

    /** Records what the request made and the body it answers with. */
    async complete(trx: Db, apiKeyId: number, key: string, first: FirstResponse): Promise<void> {
      const { made, body } = first
      const what = 'petId' in made ? { pet_id: made.petId } : { order_id: made.orderId }
      await ofKey(
        apiKeyId,
        key,
      )(trx)
        .set({ ...what, response: body })
        .execute()
    },

    /** Deletes records created before `before`, in a transaction of its own; returns how many went. */
    async purge(before: number): Promise<number> {
      const result = await handle.write((trx) =>
        trx.deleteFrom('idempotency_keys').where('created_at', '<', before).executeTakeFirst(),
      )
      return Number(result.numDeletedRows)
    },
  }
}
