import { type ColumnDefinitionBuilder, type Kysely, PostgresAdapter } from 'kysely'

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on today's table types
type AnyDb = Kysely<any>

/**
 * Key lifecycle (CONTRACT §10). Additive only, so instances still on the previous version keep working
 * during a rolling deploy: new columns have defaults or are nullable, and a key's current secret stays in
 * `api_keys.key_hash`. Existing keys become `write` keys without expiry; their id is their account.
 */
export async function up(db: AnyDb): Promise<void> {
  const int64 = db.getExecutor().adapter instanceof PostgresAdapter ? 'bigint' : 'integer'
  const required = (col: ColumnDefinitionBuilder) => col.notNull()
  await db.schema
    .alterTable('api_keys')
    .addColumn('scope', 'text', (col) => col.notNull().defaultTo('write'))
    .execute()
  await db.schema.alterTable('api_keys').addColumn('expires_at', int64).execute()
  await db.schema.alterTable('api_keys').addColumn('last_used_at', int64).execute()

  // Secrets replaced by `keys rotate`: usable until the grace ends, then named in the 401.
  await db.schema
    .createTable('retired_key_secrets')
    .addColumn('key_hash', 'text', (col) => col.primaryKey())
    .addColumn('api_key_id', int64, (col) => col.notNull().references('api_keys.id'))
    .addColumn('retired_at', int64, required)
    .addColumn('usable_until', int64, required)
    .execute()

  // Requests per account, UTC day and status class, added to by every instance's periodic flush.
  await db.schema
    .createTable('key_usage')
    .addColumn('api_key_id', int64, (col) => col.notNull().references('api_keys.id'))
    .addColumn('day', 'text', required)
    .addColumn('class', 'text', required)
    .addColumn('requests', int64, required)
    .addPrimaryKeyConstraint('key_usage_pk', ['api_key_id', 'day', 'class'])
    .execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('key_usage').execute()
  await db.schema.dropTable('retired_key_secrets').execute()
  await db.schema.alterTable('api_keys').dropColumn('last_used_at').execute()
  await db.schema.alterTable('api_keys').dropColumn('expires_at').execute()
  await db.schema.alterTable('api_keys').dropColumn('scope').execute()
}
