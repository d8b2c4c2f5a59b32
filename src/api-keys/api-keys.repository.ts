import type { Selectable } from 'kysely'
import type { ApiKeysTable, Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import type { Limits } from '../rate-limit/rate-limit.port.js'
import { isPlan, isScope, limitsFor, type Plan, type Scope } from './api-keys.plans.js'

/** An issued key (its id is the account) as the service knows it; never holds a secret. */
export interface ApiKey {
  id: number
  prefix: string
  name: string | null
  plan: Plan
  environment: string
  limits: Limits
  scope: Scope
  createdAt: number
  revokedAt: number | null
  expiresAt: number | null
  lastUsedAt: number | null
}

/** What a secret's hash names: the key, and when the secret was replaced by a rotation, since when. */
export interface KeyLookup {
  apiKey: ApiKey
  retired: { retiredAt: number; usableUntil: number } | null
}

export interface NewApiKeyRow {
  keyHash: string
  prefix: string
  name: string | null
  plan: Plan
  environment: string
  custom: Partial<Limits>
  scope: Scope
  expiresAt: number | null
  createdAt: number
}

/** The columns `keys update` may change; undefined leaves one as it is. */
export interface ApiKeyChanges {
  plan?: Plan
  custom?: Partial<Limits>
  name?: string | null
  scope?: Scope
  expiresAt?: number | null
}

function toApiKey(row: Selectable<ApiKeysTable>): ApiKey {
  if (!isPlan(row.plan)) throw new Error(`api key ${row.id} has an unknown plan`)
  if (!isScope(row.scope)) throw new Error(`api key ${row.id} has an unknown scope`)
  const custom = { perMinute: row.per_minute ?? undefined, perDay: row.per_day ?? undefined }
  return {
    id: row.id,
    prefix: row.prefix,
    name: row.name,
    plan: row.plan,
    environment: row.environment,
    limits: limitsFor(row.plan, custom),
    scope: row.scope,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
  }
}

export type ApiKeyRepository = ReturnType<typeof createApiKeyRepository>

/** The only code that writes SQL for keys; the lookups by hash are prepared reads (every request makes one). */
export function createApiKeyRepository(handle: DbHandle) {
  const { db } = handle
  const byHash = handle.prepareRead((db, keyHash: string) =>
    db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash),
  )
  // Only asked when the current secrets do not know the hash (a rotated secret, or no key at all).
  const byRetiredHash = handle.prepareRead((db, keyHash: string) =>
    db
      .selectFrom('retired_key_secrets')
      .select(['api_key_id', 'retired_at', 'usable_until'])
      .where('key_hash', '=', keyHash),
  )
  const findById = async (id: number) => {
    const row = await db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst()
    return row && toApiKey(row)
  }

  return {
    findApiKeyById: findById,

    /**
     * The key's latest use, in the caller's transaction; never moved back (another instance's may be later).
     */
    async markUsedIn(trx: Db, id: number, at: number): Promise<void> {
      await trx
        .updateTable('api_keys')
        .set({ last_used_at: at })
        .where('id', '=', id)
        .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
        .execute()
    },

    async findApiKeyByHash(keyHash: string): Promise<KeyLookup | undefined> {
      const [row] = await byHash(keyHash)
      if (row) return { apiKey: toApiKey(row), retired: null }
      const [retired] = await byRetiredHash(keyHash)
      const apiKey = retired && (await findById(retired.api_key_id))
      if (!retired || !apiKey) return undefined
      return { apiKey, retired: { retiredAt: retired.retired_at, usableUntil: retired.usable_until } }
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
            scope: key.scope,
            expires_at: key.expiresAt,
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

    /** Ids of keys with a rotated secret still inside its grace at `now`. */
    async pendingRotations(now: number): Promise<Set<number>> {
      const rows = await db
        .selectFrom('retired_key_secrets')
        .select('api_key_id')
        .where('usable_until', '>', now)
        .execute()
      return new Set(rows.map((row) => row.api_key_id))
    },

    /** When the last rotated secret of the key still inside its grace at `now` stops working; null: none. */
    async rotationPendingUntil(id: number, now: number): Promise<number | null> {
      const row = await db
        .selectFrom('retired_key_secrets')
        .select((eb) => eb.fn.max('usable_until').as('until'))
        .where('api_key_id', '=', id)
        .where('usable_until', '>', now)
        .executeTakeFirst()
      return row?.until == null ? null : Number(row.until)
    },

    /** Applies `changes` to the key; undefined when no such key exists. */
    async updateApiKey(id: number, changes: ApiKeyChanges): Promise<ApiKey | undefined> {
      const custom = changes.custom
      await handle.write((trx) =>
        trx
          .updateTable('api_keys')
          .set({
            ...(changes.plan !== undefined && { plan: changes.plan }),
            ...(custom !== undefined && {
              per_minute: custom.perMinute ?? null,
              per_day: custom.perDay ?? null,
            }),
            ...(changes.name !== undefined && { name: changes.name }),
            ...(changes.scope !== undefined && { scope: changes.scope }),
            ...(changes.expiresAt !== undefined && { expires_at: changes.expiresAt }),
          })
          .where('id', '=', id)
          .execute(),
      )
      return findById(id)
    },

    /**
     * Gives the key a new secret; the current one is kept as retired, usable until `usableUntil`. One
     * transaction: the key is never without a working secret. Undefined when no such key exists.
     */
    async rotateApiKey(
      id: number,
      secret: { keyHash: string; prefix: string },
      at: number,
      usableUntil: number,
    ): Promise<ApiKey | undefined> {
      const rotated = await handle.write(async (trx) => {
        const current = await trx
          .selectFrom('api_keys')
          .select('key_hash')
          .where('id', '=', id)
          .executeTakeFirst()
        if (!current) return false
        await trx
          .insertInto('retired_key_secrets')
          .values({ key_hash: current.key_hash, api_key_id: id, retired_at: at, usable_until: usableUntil })
          .execute()
        await trx
          .updateTable('api_keys')
          .set({ key_hash: secret.keyHash, prefix: secret.prefix })
          .where('id', '=', id)
          .execute()
        return true
      })
      return rotated ? findById(id) : undefined
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
      return findById(id)
    },
  }
}
