import type { Clock } from '../clock.js'
import type { Environment } from '../config.js'
import { createFreshCache } from '../db/fresh-cache.js'
import type { DbHandle } from '../db/handle.js'
import { AppError } from '../errors.js'
import { environmentOfKey, generateApiKey, hashApiKey, shownPrefix } from './api-keys.format.js'
import type { Plan, Scope } from './api-keys.plans.js'
import {
  type ApiKey,
  type ApiKeyChanges,
  createApiKeyRepository,
  type KeyLookup,
} from './api-keys.repository.js'

export interface IssueApiKeyInput {
  plan: Plan
  name?: string | undefined
  perMinute?: number | undefined
  perDay?: number | undefined
  /** Default `write`. */
  scope?: Scope | undefined
  /** Unix ms; undefined or null: never. */
  expiresAt?: number | null | undefined
}

/** What `keys update` changes; undefined leaves a field as it is, `expiresAt: null` clears the expiry. */
export interface UpdateApiKeyInput {
  plan?: Plan | undefined
  perMinute?: number | undefined
  perDay?: number | undefined
  name?: string | undefined
  scope?: Scope | undefined
  expiresAt?: number | null | undefined
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
  // Kept only while the database is unchanged (see fresh-cache.ts): a revocation, update or rotation by
  // the CLI or another instance takes effect on the next request.
  const found = createFreshCache<KeyLookup | undefined>('api key', handle.changeToken, KEY_CACHE_SIZE)

  async function issueApiKey(input: IssueApiKeyInput): Promise<IssuedApiKey> {
    const custom = customLimits(input.plan, input, undefined)
    const key = generateApiKey(env)
    const apiKey = await repository.insertApiKey({
      keyHash: hashApiKey(key),
      prefix: shownPrefix(key),
      name: input.name ?? null,
      plan: input.plan,
      environment: env,
      custom,
      scope: input.scope ?? 'write',
      expiresAt: input.expiresAt ?? null,
      createdAt: clock.now(),
    })
    return { apiKey, key }
  }

  /**
   * The key behind a bearer token, or an `unauthorized` AppError saying what is wrong with it.
   * Synchronous on SQLite when the key was found before and nothing has been written since.
   */
  function verifyApiKey(token: string): ApiKey | Promise<ApiKey> {
    const keyEnv = environmentOfKey(token)
    if (!keyEnv) throw unauthorized('the API key is malformed: keys look like ps_live_... or ps_test_...')
    if (keyEnv !== env) {
      throw unauthorized(`this API key belongs to the ${keyEnv} environment; this is the ${env} service`)
    }
    // Looked up by its hash: the secret itself is never compared, so timing reveals nothing about it.
    const hash = hashApiKey(token)
    const lookup = found.get(hash, () => repository.findApiKeyByHash(hash))
    return lookup instanceof Promise
      ? lookup.then((read) => usable(read, clock.now()))
      : usable(lookup, clock.now())
  }

  async function updateApiKey(id: number, input: UpdateApiKeyInput): Promise<ApiKey> {
    const current = await existing(id)
    const plan = input.plan ?? current.plan
    const changes: ApiKeyChanges = {
      plan: input.plan,
      name: input.name,
      scope: input.scope,
      expiresAt: input.expiresAt,
    }
    const limitsGiven = input.perMinute !== undefined || input.perDay !== undefined
    if (input.plan !== undefined || limitsGiven) changes.custom = customLimits(plan, input, current)
    return (await repository.updateApiKey(id, changes)) ?? (await existing(id))
  }

  /** A new secret for the key (same id, same windows); the old one works until `graceMs` has passed. */
  async function rotateApiKey(id: number, graceMs: number): Promise<IssuedApiKey> {
    const current = await existing(id)
    if (current.revokedAt !== null)
      throw new AppError('invalid_request', `key ${id} is revoked: it cannot be rotated`)
    const key = generateApiKey(env)
    const now = clock.now()
    const secret = { keyHash: hashApiKey(key), prefix: shownPrefix(key) }
    const apiKey = await repository.rotateApiKey(id, secret, now, now + graceMs)
    if (!apiKey) throw notFound(id)
    return { apiKey, key }
  }

  async function existing(id: number): Promise<ApiKey> {
    const apiKey = await repository.findApiKeyById(id)
    if (!apiKey) throw notFound(id)
    return apiKey
  }

  return {
    issueApiKey,
    verifyApiKey,
    updateApiKey,
    rotateApiKey,
    /** Every key, and whether a rotated secret of it still works (a rotation is pending). */
    listApiKeys: async () => {
      const [keys, pending] = await Promise.all([
        repository.listApiKeys(),
        repository.pendingRotations(clock.now()),
      ])
      return keys.map((apiKey) => ({ ...apiKey, rotationPending: pending.has(apiKey.id) }))
    },
    /** When a rotated secret of the key stops working (the rotation is pending until then); null: none. */
    rotationPendingUntil: (id: number) => repository.rotationPendingUntil(id, clock.now()),
    findApiKey: existing,
    revokeApiKey: (id: number) => repository.revokeApiKey(id, clock.now()),
  }
}

/**
 * The custom limits an Enterprise key stores (both, given now or kept from before), or none for the other
 * plans, which take their plan's numbers; an AppError when the combination makes no sense.
 */
function customLimits(plan: Plan, given: { perMinute?: number; perDay?: number }, current?: ApiKey) {
  const hasCustom = given.perMinute !== undefined || given.perDay !== undefined
  if (plan !== 'enterprise') {
    if (hasCustom)
      throw new AppError('invalid_request', `custom limits are only for enterprise keys, not ${plan}`)
    return {}
  }
  const kept = current?.plan === 'enterprise' ? current.limits : undefined
  const perMinute = given.perMinute ?? kept?.perMinute
  const perDay = given.perDay ?? kept?.perDay
  if (perMinute === undefined || perDay === undefined) {
    throw new AppError('invalid_request', 'an enterprise key needs both --per-minute and --per-day')
  }
  return { perMinute, perDay }
}

/** The key a lookup found, if it may be used at `now`; else the 401 that says why not. */
function usable(lookup: KeyLookup | undefined, now: number): ApiKey {
  if (!lookup) throw unauthorized('the API key is not valid')
  const { apiKey, retired } = lookup
  if (apiKey.revokedAt !== null) throw unauthorized('the API key has been revoked')
  if (retired && now >= retired.usableUntil) {
    throw unauthorized(
      `this key was rotated on ${iso(retired.retiredAt)} and its grace period ended at ${iso(retired.usableUntil)}; use the new key`,
    )
  }
  if (apiKey.expiresAt !== null && now >= apiKey.expiresAt) {
    throw unauthorized(`the API key expired at ${iso(apiKey.expiresAt)}`)
  }
  return apiKey
}

const iso = (ms: number) => new Date(ms).toISOString()
const unauthorized = (message: string) => new AppError('unauthorized', message)
const notFound = (id: number) => new AppError('not_found', `there is no key with id ${id}`)
