import { type Kysely, PostgresAdapter } from 'kysely'

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on today's table types
type AnyDb = Kysely<any>

/**
 * Pet lifecycle (CONTRACT §11). `version` counts the pet's changes (its ETag); `deleted_at` marks a removed
 * pet, which reads no longer return. The row stays, so its id is never reused and the idempotency records
 * that name it stay valid. Additive only, like 0003.
 */
export async function up(db: AnyDb): Promise<void> {
  const int64 = db.getExecutor().adapter instanceof PostgresAdapter ? 'bigint' : 'integer'
  await db.schema
    .alterTable('pets')
    .addColumn('version', int64, (col) => col.notNull().defaultTo(1))
    .execute()
  await db.schema.alterTable('pets').addColumn('deleted_at', int64).execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('pets').dropColumn('deleted_at').execute()
  await db.schema.alterTable('pets').dropColumn('version').execute()
}
