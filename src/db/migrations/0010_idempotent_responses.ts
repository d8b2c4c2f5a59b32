import type { Kysely } from 'kysely'

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on today's table types
type AnyDb = Kysely<any>

/**
 * An idempotency record keeps the body its first request answered with (JSON), so that a replay returns
 * the first response as first sent (CONTRACT §7) even once the pet was changed or deleted. Records from
 * before it have none (they expire within 24 hours): their replay reads the pet or order as it is now.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('idempotency_keys').addColumn('response', 'text').execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('idempotency_keys').dropColumn('response').execute()
}
