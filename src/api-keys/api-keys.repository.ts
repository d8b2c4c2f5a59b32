import type { Selectable } from 'kysely'
import type { ApiKeysTable } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import type { Limits } from '../rate-limit/rate-limit.port.js'
import { isPlan, limitsFor, type Plan } from './api-keys.plans.js'

/** An issued key as the service knows it; never holds the key itself. */
export interface ApiKey {
  id: number
  prefix: string
  name: string | null
  plan: Plan
  environment: string
  limits: Limits
  createdAt: number
  revokedAt: number | null
}

export interface NewApiKeyRow {
  keyHash: string
  prefix: string
  name: string | null
  plan: Plan
  environment: string
  custom: Partial<Limits>
  createdAt: number
}

function toApiKey(row: Selectable<ApiKeysTable>): ApiKey {
  if (!isPlan(row.plan)) throw new Error(`api key ${row.id} has an unknown plan`)
  const custom = { perMinute: row.per_minute ?? undefined, perDay: row.per_day ?? undefined }
  return {
    id: row.id,
    prefix: row.prefix,
    name: row.name,
    plan: row.plan,
    environment: row.environment,
    limits: limitsFor(row.plan, custom),
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  }
}

export type ApiKeyRepository = ReturnType<typeof createApiKeyRepository>

/** The only code that writes SQL for keys; the lookup by hash is a prepared read (every request makes it). */
export function createApiKeyRepository(handle: DbHandle) {
  const { db } = handle
  const byHash = handle.prepareRead((db, keyHash: string) =>
    db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash),
  )

  return {
    async findApiKeyByHash(keyHash: string): Promise<ApiKey | undefined> {
      const [row] = await byHash(keyHash)
      return row && toApiKey(row)
    },

    async insertApiKey(key: NewApiKeyRow): Promise<ApiKey> {
      const custom = key.plan === 'enterprise' ? key.custom : {}
      const row = await handle.write((trx) =>
        trx
          .insertInto('api_keys')
          .values({
            key_hash: key.keyHash,
            prefix: key.prefix,
            name: key.name,
            plan: key.plan,
            environment: key.environment,
            per_minute: custom.perMinute ?? null,
            per_day: custom.perDay ?? null,
            created_at: key.createdAt,
          })
          .returningAll()
          .executeTakeFirstOrThrow(),
      )
      return toApiKey(row)
    },

    async listApiKeys(): Promise<ApiKey[]> {
      const rows = await db.selectFrom('api_keys').selectAll().orderBy('id').execute()
      return rows.map(toApiKey)
    },

    /** Marks the key revoked (keeping the first revocation time); undefined when no such key exists. */
    async revokeApiKey(id: number, at: number): Promise<ApiKey | undefined> {
      await handle.write((trx) =>
        trx
          .updateTable('api_keys')
          .set({ revoked_at: at })
          .where('id', '=', id)
          .where('revoked_at', 'is', null)
          .execute(),
      )
      const row = await db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst()
      return row && toApiKey(row)
    },
  }
}
