import { type ColumnDefinitionBuilder, type Kysely, PostgresAdapter } from 'kysely'

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on today's table types
type AnyDb = Kysely<any>

/** SQLite's INTEGER is 64-bit and an id must be INTEGER PRIMARY KEY AUTOINCREMENT; PostgreSQL needs bigint. */
function dialectOf(db: AnyDb) {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  return {
    int64: postgres ? ('bigint' as const) : ('integer' as const),
    id: (col: ColumnDefinitionBuilder) =>
      postgres ? col.primaryKey().generatedByDefaultAsIdentity() : col.primaryKey().autoIncrement(),
  }
}

export async function up(db: AnyDb): Promise<void> {
  const { int64, id } = dialectOf(db)
  await db.schema
    .createTable('pets')
    // AUTOINCREMENT: ids ascend in creation order and are never reused, even after deletes.
    .addColumn('id', int64, id)
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('category_id', int64, (col) => col.notNull())
    .addColumn('status', 'text')
    .addColumn('created_at', int64, (col) => col.notNull())
    .execute()
  await db.schema.createIndex('pets_status_id').on('pets').columns(['status', 'id']).execute()

  await db.schema
    .createTable('api_keys')
    .addColumn('id', int64, id)
    .addColumn('key_hash', 'text', (col) => col.notNull().unique())
    .addColumn('prefix', 'text', (col) => col.notNull())
    .addColumn('name', 'text')
    .addColumn('plan', 'text', (col) => col.notNull())
    .addColumn('environment', 'text', (col) => col.notNull())
    .addColumn('per_minute', int64)
    .addColumn('per_day', int64)
    .addColumn('created_at', int64, (col) => col.notNull())
    .addColumn('revoked_at', int64)
    .execute()

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('api_key_id', int64, (col) => col.notNull().references('api_keys.id'))
    .addColumn('key', 'text', (col) => col.notNull())
    .addColumn('request_hash', 'text', (col) => col.notNull())
    .addColumn('pet_id', int64, (col) => col.references('pets.id'))
    .addColumn('created_at', int64, (col) => col.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['api_key_id', 'key'])
    .execute()
  await db.schema
    .createIndex('idempotency_keys_created_at')
    .on('idempotency_keys')
    .column('created_at')
    .execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute()
  await db.schema.dropTable('api_keys').execute()
  await db.schema.dropTable('pets').execute()
}
