import { sql } from 'kysely'
import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { type AttemptOutcome, PENDING } from './attempts.repository.js'

/** Outcomes per UPDATE: 6 parameters each. */
const OUTCOMES_PER_UPDATE = 500
/** Whether an attempt's row is still pending when its outcome is written, or an ending failed it meanwhile. */
type Held = 'pending' | 'ended'

/** The outcomes `writeOutcomes` wrote, by attempt id; those of attempts taken over are in neither. */
export interface WrittenOutcomes {
  /** Of attempts still pending: their series goes on (a retry, the endpoint's streak). */
  pending: Set<number>
  /**
   * Of attempts an ending (a disable, a DELETE, a re-enable) failed while they were in flight: written as
   * they came, and nothing follows them.
   */
  ended: Set<number>
}

/**
 * What came of the attempts a dispatcher made, written down (settle.ts) while each is still its own: the
 * write half of `webhook_attempts` a step's settling owns, beside the queue's (attempts.repository.ts).
 */
export function createOutcomesRepository(handle: DbHandle) {
  // SQLite's form: one compiled statement run per row (as attempts.repository.ts `schedule`), one for
  // attempts still pending and one for those an ending failed while in flight.
  const outcomeWrite = (held: Held) =>
    handle.prepareWrite(
      (
        db,
        id: number,
        owner: string,
        status: 'succeeded' | 'failed',
        at: number,
        httpStatus: number | null,
        error: string | null,
        durationMs: number,
      ) =>
        db
          .updateTable('webhook_attempts')
          .set({ status, at, http_status: httpStatus, error, duration_ms: durationMs, lease_token: null })
          .where('id', '=', id)
          .where('lease_token', '=', owner)
          .where('status', held === 'pending' ? '=' : '<>', PENDING)
          .returning('id'),
    )
  const writeOutcome = { pending: outcomeWrite('pending'), ended: outcomeWrite('ended') }
  /** One run of an outcome written (its arguments, as the statements take them). */
  type OutcomeRun = Parameters<typeof writeOutcome.pending>[1][number]

  /**
   * Writes what came of attempts `owner` still holds whose row is still pending, or (`ended`) is no longer;
   * the ids written.
   */
  async function writeHeld(
    trx: Db,
    owner: string,
    outcomes: readonly { id: number; outcome: AttemptOutcome }[],
    held: Held,
  ): Promise<Set<number>> {
    const kept = new Set<number>()
    if (handle.dialect === 'sqlite') {
      const runs = outcomes.map(({ id, outcome }): OutcomeRun => {
        const status = outcome.error === null ? 'succeeded' : 'failed'
        return [id, owner, status, outcome.startedAt, outcome.httpStatus, outcome.error, outcome.durationMs]
      })
      const written = await writeOutcome[held](trx, runs)
      outcomes.forEach(({ id }, index) => {
        if ((written[index]?.length ?? 0) > 0) kept.add(id)
      })
      return kept
    }
    for (let start = 0; start < outcomes.length; start += OUTCOMES_PER_UPDATE) {
      const rows = outcomes.slice(start, start + OUTCOMES_PER_UPDATE).map(
        ({ id, outcome }) =>
          sql`(cast(${id} as bigint), cast(${outcome.error === null ? 'succeeded' : 'failed'} as text),
            cast(${outcome.startedAt} as bigint), cast(${outcome.httpStatus} as integer),
            cast(${outcome.error} as text), cast(${outcome.durationMs} as integer))`,
      )
      const { rows: written } = await sql<{ id: number }>`
        with v(id, status, at, http_status, error, duration_ms) as (values ${sql.join(rows)})
        update webhook_attempts set status = v.status, at = v.at, http_status = v.http_status,
          error = v.error, duration_ms = v.duration_ms, lease_token = null
        from v where webhook_attempts.id = v.id and webhook_attempts.lease_token = ${owner}
          and webhook_attempts.status ${sql.raw(held === 'pending' ? '=' : '<>')} ${PENDING}
        returning webhook_attempts.id`.execute(trx)
      for (const row of written) kept.add(Number(row.id))
    }
    return kept
  }

  return {
    /**
     * Writes what came of attempts `owner` still holds (on SQLite one statement run per row, 4 times
     * cheaper there than one UPDATE of many rows; on PostgreSQL one per OUTCOMES_PER_UPDATE). One that was
     * taken over (its endpoint's lease lapsed and another dispatcher took it) is not written. One that an
     * ending failed while it was in flight (its `lease_token` stays) is written as it came, and told
     * apart: its endpoint may be enabled again by now, and nothing may follow it. Those are few, and cost
     * a second statement only when there are any (or attempts taken over).
     */
    async writeOutcomes(
      trx: Db,
      owner: string,
      ended: readonly { id: number; outcome: AttemptOutcome }[],
    ): Promise<WrittenOutcomes> {
      const pending = await writeHeld(trx, owner, ended, 'pending')
      const rest = ended.filter(({ id }) => !pending.has(id))
      return { pending, ended: rest.length === 0 ? new Set() : await writeHeld(trx, owner, rest, 'ended') }
    },
  }
}
