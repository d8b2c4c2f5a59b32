import type { Generated, Kysely } from 'kysely'

/** Table shapes as stored. Times are Unix milliseconds; ids are int64 within 2^53 - 1. */
export interface PetsTable {
  id: Generated<number>
  name: string
  category_id: number
  status: string | null
  created_at: number
}

export interface ApiKeysTable {
  id: Generated<number>
  key_hash: string
  prefix: string
  name: string | null
  plan: string
  environment: string
  /** Only Enterprise keys carry their own limits; other plans take the plan's numbers. */
  per_minute: number | null
  per_day: number | null
  created_at: number
  revoked_at: number | null
}

export interface IdempotencyKeysTable {
  api_key_id: number
  key: string
  request_hash: string
  /** Null only inside the transaction that creates the pet: never visible to another request. */
  pet_id: number | null
  created_at: number
}

/** Always empty outside the readiness probe's transaction (db/write-health.ts). */
export interface StorageProbeTable {
  id: number
  filler: string
}

export interface Database {
  pets: PetsTable
  api_keys: ApiKeysTable
  idempotency_keys: IdempotencyKeysTable
  storage_probe: StorageProbeTable
}

/** The database handle every repository function takes first (or a transaction of it). */
export type Db = Kysely<Database>
