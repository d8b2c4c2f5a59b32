import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'

/** What a request made: a pet, or an order. */
export type Made = { petId: number } | { orderId: number }

/** What an earlier request with the same API key and Idempotency-Key left. */
export interface IdempotencyRecord {
  requestHash: string
  /** Null only inside the transaction that makes the thing: never visible to another request. */
  made: Made | null
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
        .select(['request_hash', 'pet_id', 'order_id', 'created_at'])
        .where('api_key_id', '=', apiKeyId)
        .where('key', '=', key)
        .executeTakeFirst()
      if (!row) return undefined
      const made =
        row.pet_id !== null ? { petId: row.pet_id } : row.order_id !== null ? { orderId: row.order_id } : null
      return { requestHash: row.request_hash, made, createdAt: row.created_at }
    },

    /** Starts an expired record afresh for a new request. */
    async reclaim(trx: Db, claim: IdempotencyClaim): Promise<void> {
      await ofKey(
        claim.apiKeyId,
        claim.key,
      )(trx)
        .set({ request_hash: claim.requestHash, pet_id: null, order_id: null, created_at: claim.createdAt })
        .execute()
    },

    /** Records what the request made. */
    async complete(trx: Db, apiKeyId: number, key: string, made: Made): Promise<void> {
      await ofKey(
        apiKeyId,
        key,
      )(trx)
        .set('petId' in made ? { pet_id: made.petId } : { order_id: made.orderId })
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
