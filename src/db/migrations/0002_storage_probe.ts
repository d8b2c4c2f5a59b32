import type { Kysely } from 'kysely'

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on today's table types
type AnyDb = Kysely<any>

/**
 * An always-empty table that /readyz writes to (and empties in the same transaction) after the storage
 * refused a write, to learn whether it takes writes again (db/write-health.ts).
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('storage_probe')
    .addColumn('id', 'integer', (col) => col.primaryKey())
    .addColumn('filler', 'text', (col) => col.notNull())
    .execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('storage_probe').execute()
}
