import type { Kysely } from 'kysely'

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on today's table types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('pets')
    // AUTOINCREMENT: ids ascend in creation order and are never reused, even after deletes.
    .addColumn('id', 'integer', (col) => col.primaryKey().autoIncrement())
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('category_id', 'integer', (col) => col.notNull())
    .addColumn('status', 'text')
    .addColumn('created_at', 'integer', (col) => col.notNull())
    .execute()
  await db.schema.createIndex('pets_status_id').on('pets').columns(['status', 'id']).execute()

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'integer', (col) => col.primaryKey().autoIncrement())
    .addColumn('key_hash', 'text', (col) => col.notNull().unique())
    .addColumn('prefix', 'text', (col) => col.notNull())
    .addColumn('name', 'text')
    .addColumn('plan', 'text', (col) => col.notNull())
    .addColumn('environment', 'text', (col) => col.notNull())
    .addColumn('per_minute', 'integer')
    .addColumn('per_day', 'integer')
    .addColumn('created_at', 'integer', (col) => col.notNull())
    .addColumn('revoked_at', 'integer')
    .execute()

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('api_key_id', 'integer', (col) => col.notNull().references('api_keys.id'))
    .addColumn('key', 'text', (col) => col.notNull())
    .addColumn('request_hash', 'text', (col) => col.notNull())
    .addColumn('pet_id', 'integer', (col) => col.references('pets.id'))
    .addColumn('created_at', 'integer', (col) => col.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['api_key_id', 'key'])
    .execute()
  await db.schema
    .createIndex('idempotency_keys_created_at')
    .on('idempotency_keys')
    .column('created_at')
    .execute()
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute()
  await db.schema.dropTable('api_keys').execute()
  await db.schema.dropTable('pets').execute()
}
