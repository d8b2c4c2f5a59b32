import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { type ClaimedAttempt, createAttemptsRepository } from './attempts.repository.js'
import { createEndpointsRepository } from './endpoints.repository.js'

/**
 * Why an account's key no longer works at `now`, as its endpoints say it ("the account's key was
 * revoked", "… expired on <instant>"); undefined while it works.
 */
export function endedKeyReason(key: { revokedAt: number | null; expiresAt: number | null }, now: number) {
  if (key.revokedAt !== null) return "the account's key was revoked"
  if (key.expiresAt !== null && key.expiresAt <= now)
    return `the account's key expired on ${new Date(key.expiresAt).toISOString()}`
  return undefined
}

/**
 * An account whose key was revoked or has expired receives nothing more: fan-out gives its endpoints no
 * new attempt, and of the attempts a step has just taken, those of its endpoints end here as failed, with
 * why, instead of being sent. A key renewed later (`keys update --expires`) takes events again from then.
 */
export function createEndedAccounts(handle: DbHandle) {
  const endpoints = createEndpointsRepository(handle)
  const attempts = createAttemptsRepository(handle)

  /** `taken` without the attempts of ended accounts' endpoints, which are written down as failed. */
  return async function withoutEndedAccounts(
    trx: Db,
    taken: readonly ClaimedAttempt[],
    now: number,
  ): Promise<ClaimedAttempt[]> {
    if (taken.length === 0) return []
    const ids = [...new Set(taken.map((claimed) => claimed.endpoint.id))]
    const ended = await endpoints.endedAccountsIn(trx, ids, now)
    if (ended.length === 0) return [...taken]
    const reasons = new Map(
      ended.map((row) => [
        row.id,
        endedKeyReason({ revokedAt: row.revoked_at, expiresAt: row.expires_at }, now),
      ]),
    )
    for (const [endpointId, reason] of reasons) {
      const ids = taken.filter((claimed) => claimed.endpoint.id === endpointId).map((claimed) => claimed.id)
      await attempts.fail(trx, ids, reason ?? "the account's key no longer works", now)
    }
    return taken.filter((claimed) => !reasons.has(claimed.endpoint.id))
  }
}
