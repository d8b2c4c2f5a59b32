import type { Clock } from '../clock.js'
import type { Environment } from '../config.js'
import { type ChangeToken, changeTokenOf } from '../db/change-token.js'
import type { Db } from '../db/database.js'
import { AppError } from '../errors.js'
import { environmentOfKey, generateApiKey, hashApiKey, shownPrefix } from './api-keys.format.js'
import type { Limits, Plan } from './api-keys.plans.js'
import {
  type ApiKey,
  findApiKeyByHash,
  insertApiKey,
  listApiKeys,
  revokeApiKey,
} from './api-keys.repository.js'

export interface IssueApiKeyInput {
  plan: Plan
  name?: string | undefined
  perMinute?: number | undefined
  perDay?: number | undefined
}

export interface IssuedApiKey {
  apiKey: ApiKey
  /** The full key: shown once, never stored. */
  key: string
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>

const BEARER = /^Bearer +(\S+) *$/i

function unauthorized(message: string, challenge = 'Bearer error="invalid_token"'): AppError {
  return new AppError('unauthorized', message, { 'www-authenticate': challenge })
}

export function createApiKeyService(deps: { db: Db; clock: Clock; env: Environment }) {
  const { db, clock, env } = deps

  const lookups = createKeyLookupCache(changeTokenOf(db))

  async function issueApiKey(input: IssueApiKeyInput): Promise<IssuedApiKey> {
    const custom: Partial<Limits> = { perMinute: input.perMinute, perDay: input.perDay }
    const hasCustom = input.perMinute !== undefined || input.perDay !== undefined
    if (input.plan === 'enterprise' && (input.perMinute === undefined || input.perDay === undefined)) {
      throw new AppError('invalid_request', 'an enterprise key needs both --per-minute and --per-day')
    }
    if (input.plan !== 'enterprise' && hasCustom) {
      throw new AppError('invalid_request', `custom limits are only for enterprise keys, not ${input.plan}`)
    }
    const key = generateApiKey(env)
    const apiKey = await insertApiKey(db, {
      keyHash: hashApiKey(key),
      prefix: shownPrefix(key),
      name: input.name ?? null,
      plan: input.plan,
      environment: env,
      custom,
      createdAt: clock.now(),
    })
    lookups.clear()
    return { apiKey, key }
  }

  /** Resolves the key of an `Authorization` header, or throws a 401 that says what is wrong with it. */
  async function verifyApiKey(authorization: string | undefined): Promise<ApiKey> {
    if (!authorization) {
      throw unauthorized('an API key is required: send Authorization: Bearer <API key>', 'Bearer')
    }
    const token = BEARER.exec(authorization)?.[1]
    if (!token)
      throw unauthorized('Authorization must use the Bearer scheme: Authorization: Bearer <API key>')
    const keyEnv = environmentOfKey(token)
    if (!keyEnv) throw unauthorized('the API key is malformed: keys look like ps_live_... or ps_test_...')
    if (keyEnv !== env) {
      throw unauthorized(`this API key belongs to the ${keyEnv} environment; this is the ${env} service`)
    }
    // Looked up by its hash: the secret itself is never compared, so timing reveals nothing about it.
    const hash = hashApiKey(token)
    const apiKey = lookups.get(hash) ?? lookups.remember(hash, await findApiKeyByHash(db, hash))
    if (!apiKey) throw unauthorized('the API key is not valid')
    if (apiKey.revokedAt !== null) throw unauthorized('the API key has been revoked')
    return apiKey
  }

  return {
    issueApiKey,
    verifyApiKey,
    listApiKeys: () => listApiKeys(db),
    revokeApiKey: async (id: number) => {
      const revoked = await revokeApiKey(db, id, clock.now())
      lookups.clear()
      return revoked
    },
  }
}

/** Found keys kept at most; past it the cache starts over. */
const KEY_CACHE_SIZE = 10_000

/**
 * Keys found by hash, kept only while the database is unchanged by any other connection (the CLI
 * revoking a key, an operator changing a plan); this service's own key writes clear it too. Unknown
 * hashes are never kept, so random keys cannot grow it. Without a change token nothing is cached.
 */
function createKeyLookupCache(changeToken: ChangeToken | undefined) {
  const found = new Map<string, ApiKey>()
  let seenToken: unknown
  return {
    get(hash: string): ApiKey | undefined {
      if (!changeToken) return undefined
      const token = changeToken()
      if (token !== seenToken) {
        found.clear()
        seenToken = token
      }
      return found.get(hash)
    },
    remember(hash: string, apiKey: ApiKey | undefined): ApiKey | undefined {
      if (changeToken && apiKey) {
        if (found.size >= KEY_CACHE_SIZE) found.clear()
        found.set(hash, apiKey)
      }
      return apiKey
    },
    clear: () => found.clear(),
  }
}
