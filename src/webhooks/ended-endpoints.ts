import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { type ClaimedAttempt, createAttemptsRepository } from './attempts.repository.js'
import { createEndingsRepository, type EndedEndpointRow, type EndingRow } from './endings.repository.js'

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

/** Why the attempts of an endpoint deleted or disabled end unsent; undefined while it is neither. */
export function endingReason(row: EndingRow): string | undefined {
  if (row.deleted_at !== null) return 'the endpoint was deleted'
  if (row.status !== 'enabled') return row.disabled_reason ?? 'the endpoint was disabled'
  return undefined
}

/** Why an attempt of this endpoint is not sent: it was deleted or disabled, or its account's key ended. */
function endedReason(row: EndedEndpointRow, now: number): string {
  return (
    endingReason(row) ??
    endedKeyReason({ revokedAt: row.revoked_at, expiresAt: row.expires_at }, now) ??
    "the account's key no longer works"
  )
}

/**
 * Of the attempts a step has just taken, those of ended endpoints end here as failed, with why, instead of
 * being sent:
 * - an account whose key was revoked or has expired receives nothing more (fan-out gives its endpoints no
 *   new attempt either); a key renewed later (`keys update --expires`) takes events again from then;
 * - an endpoint deleted or disabled: its ending failed its pending attempts, and this ends one a fan-out
 *   wrote after it (PostgreSQL: the dispatcher's own disable, for a 410 or five days of failures, does not
 *   wait for fan-outs in flight as an answered one does), so it is never sent, nor after a re-enable.
 */
export function createEndedEndpoints(handle: DbHandle) {
  const endings = createEndingsRepository(handle)
  const attempts = createAttemptsRepository(handle)

  /** `taken` without the attempts of ended endpoints, which are written down as failed. */
  return async function withoutEnded(
    trx: Db,
    taken: readonly ClaimedAttempt[],
    now: number,
  ): Promise<ClaimedAttempt[]> {
    if (taken.length === 0) return []
    const ids = [...new Set(taken.map((claimed) => claimed.endpoint.id))]
    const ended = await endings.endedIn(trx, ids, now)
    if (ended.length === 0) return [...taken]
    const reasons = new Map(ended.map((row) => [row.id, endedReason(row, now)]))
    for (const [endpointId, reason] of reasons) {
      const ids = taken.filter((claimed) => claimed.endpoint.id === endpointId).map((claimed) => claimed.id)
      await attempts.fail(trx, ids, reason, now)
    }
    return taken.filter((claimed) => !reasons.has(claimed.endpoint.id))
  }
}
