import { type ColumnDefinitionBuilder, type Kysely, PostgresAdapter, sql } from 'kysely'

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on today's table types
type AnyDb = Kysely<any>

/** Store orders (CONTRACT §11): one row per order, the account's; an Idempotency-Key may name an order. */
export async function up(db: AnyDb): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  const int64 = postgres ? 'bigint' : 'integer'
  const id = (col: ColumnDefinitionBuilder) =>
    postgres ? col.primaryKey().generatedByDefaultAsIdentity() : col.primaryKey().autoIncrement()
  await db.schema
    .createTable('orders')
    .addColumn('id', int64, id)
    .addColumn('api_key_id', int64, (col) => col.notNull().references('api_keys.id'))
    .addColumn('pet_id', int64, (col) => col.notNull().references('pets.id'))
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('created_at', int64, (col) => col.notNull())
    .addColumn('updated_at', int64, (col) => col.notNull())
    .execute()
  await db.schema.createIndex('orders_account_id').on('orders').columns(['api_key_id', 'id']).execute()
  await db.schema
    .createIndex('orders_account_status_id')
    .on('orders')
    .columns(['api_key_id', 'status', 'id'])
    .execute()
  await db.schema.createIndex('orders_pet_status').on('orders').columns(['pet_id', 'status']).execute()
  // The inventory counts live pets by status from this index alone (a partial index: deleted pets are not in it).
  await db.schema
    .createIndex('pets_live_status')
    .on('pets')
    .column('status')
    .where(sql.ref('deleted_at'), 'is', null)
    .execute()
  await db.schema
    .alterTable('idempotency_keys')
    .addColumn('order_id', int64, (col) => col.references('orders.id'))
    .execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('idempotency_keys').dropColumn('order_id').execute()
  await db.schema.dropIndex('pets_live_status').execute()
  await db.schema.dropTable('orders').execute()
}
