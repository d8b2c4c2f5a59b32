import type { IncomingMessage } from 'node:http'
import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { AppError } from '../errors.js'
import { countHeader } from '../http/header-lines.js'
import { sha256 } from '../sha256.js'
import { inSpan } from '../tracing/tracing.js'
import {
  createIdempotencyRepository,
  type FirstResponse,
  type IdempotencyClaim,
  type Made,
} from './idempotency.repository.js'

/** Idempotency records are kept for 24 hours (CONTRACT §7). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000

/** One request that may carry an Idempotency-Key, as an operation describes it. */
export interface IdempotentRequest {
  /** The account: keys are scoped to it. */
  apiKeyId: number
  key: string
  /**
   * The request in a canonical form, which no other operation's can equal (`order:42`; a pet's is a JSON
   * array, `["Rex",1,null]`): the same request gives the same text, whatever its key order or white space.
   */
  request: string
  now: number
}

export type Outcome<T> = { performed: T } | { replayOf: FirstResponse }

export type Idempotency = ReturnType<typeof createIdempotency>

/** The flow over one database: `runOnce` for each operation, and the purge of expired records. */
export function createIdempotency(handle: Pick<DbHandle, 'write'>) {
  const records = createIdempotencyRepository(handle)

  /**
   * Runs `perform` at most once per account and Idempotency-Key within 24 hours, inside the caller's write
   * transaction: the claim, the operation and the record of what it made commit together, so a crash leaves
   * neither a half-made thing nor a stale marker, and a concurrent duplicate waits on the claim and then
   * finds the record. A repeat of the same request gets `replayOf` (what the first one made and the body
   * it answered with, `answerOf(performed)`, which the caller returns as it was, however the thing changed
   * since or whether it still exists); the same key with another request is 422 `idempotency_key_reused`.
   */
  async function runOnce<T>(
    trx: Db,
    request: IdempotentRequest,
    perform: () => Promise<T>,
    madeOf: (performed: T) => Made,
    answerOf: (performed: T) => object,
  ): Promise<Outcome<T>> {
    const claim = {
      apiKeyId: request.apiKeyId,
      key: request.key,
      requestHash: sha256(request.request),
      createdAt: request.now,
    }
    const first = await inSpan('idempotency claim', {}, async (span) => {
      const outcome = await claimOrFind(trx, claim, request.now)
      span?.setAttribute('petstore.idempotency.outcome', 'first' in outcome ? 'replayed' : outcome.claimed)
      return 'first' in outcome ? outcome.first : undefined
    })
    if (first) return { replayOf: first }
    const performed = await perform()
    const body = JSON.stringify(answerOf(performed))
    await records.complete(trx, claim.apiKeyId, claim.key, { made: madeOf(performed), body })
    return { performed }
  }

  /**
   * The key claimed for this request (`claimed`, or `reclaimed` from an expired record), or what its first
   * request made; a record of another request, or one still in progress, throws.
   */
  async function claimOrFind(
    trx: Db,
    claim: IdempotencyClaim,
    now: number,
  ): Promise<{ first: FirstResponse } | { claimed: 'claimed' | 'reclaimed' }> {
    if (await records.claim(trx, claim)) return { claimed: 'claimed' }
    const record = await records.find(trx, claim.apiKeyId, claim.key)
    if (record && record.createdAt > now - IDEMPOTENCY_TTL_MS) {
      if (record.requestHash !== claim.requestHash) throw keyReused()
      if (record.first) return { first: record.first }
      throw keyInUse()
    }
    await records.reclaim(trx, claim)
    return { claimed: 'reclaimed' }
  }

  return {
    runOnce,
    /** Deletes the records older than the TTL (every 10 minutes: deps.ts). */
    purgeExpired: (now: number) => records.purge(now - IDEMPOTENCY_TTL_MS),
  }
}

/**
 * What a replay answers: the first response's body as it was sent, whatever became of the thing since. A
 * record from before migration 0010 kept no body, only what was made: `asNow` reads the thing as it is
 * now, and one since deleted is a 404.
 */
export async function replayedAnswer<T>(
  first: FirstResponse,
  asSent: (body: string) => T,
  asNow: (made: Made) => Promise<T | undefined>,
): Promise<T> {
  if (first.body !== null) return asSent(first.body)
  const now = await asNow(first.made)
  if (now !== undefined) return now
  const { made } = first
  throw new AppError(
    'not_found',
    'petId' in made
      ? `pet ${made.petId}, which this Idempotency-Key created, was deleted`
      : `order ${made.orderId}, which this Idempotency-Key placed, does not exist`,
  )
}

/** The Idempotency-Key a request carries, if any: sent once, since Node joins repeats into another key. */
export function idempotencyKeyOf(request: IncomingMessage): string | undefined {
  const key = request.headers['idempotency-key']
  if (key !== undefined && countHeader(request.rawHeaders, 'idempotency-key') > 1) {
    throw new AppError('invalid_request', 'Idempotency-Key must be sent once')
  }
  return typeof key === 'string' ? key : undefined
}

/** The `Idempotent-Replayed` response header, documented once for every operation that replays. */
export const IDEMPOTENT_REPLAYED_HEADER = {
  'Idempotent-Replayed': {
    type: 'string',
    description:
      '`true` when this is the first response to an earlier request with the same Idempotency-Key, replayed as it was sent (nothing was made this time).',
  },
} as const

/** The messages of the two refusals, for every operation that takes an Idempotency-Key (and its docs). */
export const IDEMPOTENCY_MESSAGES = {
  idempotency_key_reused: 'this Idempotency-Key was used with a different request; use a new key',
  idempotency_key_in_use: 'a request with this Idempotency-Key is in flight; retry shortly',
} as const

export const keyReused = () =>
  new AppError('idempotency_key_reused', IDEMPOTENCY_MESSAGES.idempotency_key_reused)

/** A record whose request has not made its thing yet: only while that request is in flight. */
export const keyInUse = () =>
  new AppError('idempotency_key_in_use', IDEMPOTENCY_MESSAGES.idempotency_key_in_use)
