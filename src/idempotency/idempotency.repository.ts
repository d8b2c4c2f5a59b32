import type { Selectable } from 'kysely'
import type { Db, IdempotencyKeysTable } from '../db/database.js'

export type IdempotencyRecord = Selectable<IdempotencyKeysTable>

export interface IdempotencyClaim {
  apiKeyId: number
  key: string
  requestHash: string
  createdAt: number
}

/**
 * Inserts the record unless one exists for this API key and Idempotency-Key. True when this call
 * inserted it. A concurrent claim in another transaction waits on the unique key until this one ends.
 */
export async function claimIdempotencyKey(db: Db, claim: IdempotencyClaim): Promise<boolean> {
  const result = await db
    .insertInto('idempotency_keys')
    .values({
      api_key_id: claim.apiKeyId,
      key: claim.key,
      request_hash: claim.requestHash,
      pet_id: null,
      created_at: claim.createdAt,
    })
    .onConflict((conflict) => conflict.columns(['api_key_id', 'key']).doNothing())
    .executeTakeFirst()
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n
}

export async function findIdempotencyRecord(
  db: Db,
  apiKeyId: number,
  key: string,
): Promise<IdempotencyRecord | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('api_key_id', '=', apiKeyId)
    .where('key', '=', key)
    .executeTakeFirst()
}

/** Starts an expired record afresh for a new request. */
export async function reclaimIdempotencyKey(db: Db, claim: IdempotencyClaim): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ request_hash: claim.requestHash, pet_id: null, created_at: claim.createdAt })
    .where('api_key_id', '=', claim.apiKeyId)
    .where('key', '=', claim.key)
    .execute()
}

export async function completeIdempotencyKey(
  db: Db,
  apiKeyId: number,
  key: string,
  petId: number,
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ pet_id: petId })
    .where('api_key_id', '=', apiKeyId)
    .where('key', '=', key)
    .execute()
}

/** Deletes records created before `before`; returns how many went. */
export async function purgeIdempotencyKeys(db: Db, before: number): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('created_at', '<', before).executeTakeFirst()
  return Number(result.numDeletedRows)
}
