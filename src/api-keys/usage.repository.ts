import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'

/** One account's count of one UTC day and status class, as `key_usage` keeps it. */
export interface UsageRow {
  api_key_id: number
  day: string
  class: string
  requests: number
}

/**
 * The SQL of `key_usage`: counts added to an account's rows (usage.ts flushes what it counted in memory),
 * and read back for `keys usage` and `GET /v1/usage`.
 */
export function createUsageRepository(handle: DbHandle) {
  return {
    /** Adds the counts to the rows of the same account, day and class (creating those that do not exist). */
    async add(trx: Db, rows: readonly UsageRow[]): Promise<void> {
      if (rows.length === 0) return
      await trx
        .insertInto('key_usage')
        .values([...rows])
        .onConflict((conflict) =>
          conflict.columns(['api_key_id', 'day', 'class']).doUpdateSet((eb) => ({
            requests: eb('key_usage.requests', '+', eb.ref('excluded.requests')),
          })),
        )
        .execute()
    },
    /** The account's rows from `fromDay` on (a UTC day, `2026-11-23`). */
    since: (apiKeyId: number, fromDay: string) =>
      handle.db
        .selectFrom('key_usage')
        .select(['day', 'class', 'requests'])
        .where('api_key_id', '=', apiKeyId)
        .where('day', '>=', fromDay)
        .execute(),
  }
}
