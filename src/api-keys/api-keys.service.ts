import type { Clock } from '../clock.js'
import type { Environment } from '../config.js'
import { createFreshCache } from '../db/fresh-cache.js'
import type { DbHandle } from '../db/handle.js'
import { AppError } from '../errors.js'
import { environmentOfKey, generateApiKey, hashApiKey, shownPrefix } from './api-keys.format.js'
import type { Plan } from './api-keys.plans.js'
import { type ApiKey, createApiKeyRepository } from './api-keys.repository.js'

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

/** Found keys kept at most; past it the cache starts over. Unknown hashes are never kept. */
const KEY_CACHE_SIZE = 10_000

export function createApiKeyService(deps: { handle: DbHandle; clock: Clock; env: Environment }) {
  const { handle, clock, env } = deps
  const repository = createApiKeyRepository(handle)
  // Kept only while the database is unchanged (see fresh-cache.ts): a revocation by the CLI or another
  // instance takes effect on the next request. PostgreSQL has no token: every request reads the row.
  const found = createFreshCache<ApiKey>(handle.changeToken, KEY_CACHE_SIZE)

  async function issueApiKey(input: IssueApiKeyInput): Promise<IssuedApiKey> {
    const hasCustom = input.perMinute !== undefined || input.perDay !== undefined
    if (input.plan === 'enterprise' && (input.perMinute === undefined || input.perDay === undefined)) {
      throw new AppError('invalid_request', 'an enterprise key needs both --per-minute and --per-day')
    }
    if (input.plan !== 'enterprise' && hasCustom) {
      throw new AppError('invalid_request', `custom limits are only for enterprise keys, not ${input.plan}`)
    }
    const key = generateApiKey(env)
    const apiKey = await repository.insertApiKey({
      keyHash: hashApiKey(key),
      prefix: shownPrefix(key),
      name: input.name ?? null,
      plan: input.plan,
      environment: env,
      custom: { perMinute: input.perMinute, perDay: input.perDay },
      createdAt: clock.now(),
    })
    return { apiKey, key }
  }

  /**
   * The key behind a bearer token, or an `unauthorized` AppError saying what is wrong with it.
   * Synchronous when the key was found before and nothing has been written since.
   */
  function verifyApiKey(token: string): ApiKey | Promise<ApiKey> {
    const keyEnv = environmentOfKey(token)
    if (!keyEnv) throw unauthorized('the API key is malformed: keys look like ps_live_... or ps_test_...')
    if (keyEnv !== env) {
      throw unauthorized(`this API key belongs to the ${keyEnv} environment; this is the ${env} service`)
    }
    // Looked up by its hash: the secret itself is never compared, so timing reveals nothing about it.
    const hash = hashApiKey(token)
    const { value, token: version } = found.lookup(hash)
    if (value) return usable(value)
    return repository
      .findApiKeyByHash(hash)
      .then((apiKey) => usable(apiKey && found.store(hash, version, apiKey)))
  }

  return {
    issueApiKey,
    verifyApiKey,
    listApiKeys: () => repository.listApiKeys(),
    revokeApiKey: (id: number) => repository.revokeApiKey(id, clock.now()),
  }
}

function usable(apiKey: ApiKey | undefined): ApiKey {
  if (!apiKey) throw unauthorized('the API key is not valid')
  if (apiKey.revokedAt !== null) throw unauthorized('the API key has been revoked')
  return apiKey
}

const unauthorized = (message: string) => new AppError('unauthorized', message)
