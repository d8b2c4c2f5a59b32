import { type ColumnDefinitionBuilder, type Kysely, PostgresAdapter, sql } from 'kysely'

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on today's table types
type AnyDb = Kysely<any>

/**
 * Events and signed webhooks (CONTRACT §14). `events` is the outbox: one row per committed change, written in
 * the change's transaction; `fanned_out` is 0 until a dispatcher has made the change's attempts. Each row of
 * `webhook_attempts` is one attempt of one delivery (an event to an endpoint): `pending` until it is made,
 * claimed by a lease (`lease_token`, `lease_until`) while it is in flight. Orders gain the version their
 * events carry as `resourceVersion`. Additive only.
 */
export async function up(db: AnyDb): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  const int64 = postgres ? 'bigint' : 'integer'
  const id = (col: ColumnDefinitionBuilder) =>
    postgres ? col.primaryKey().generatedByDefaultAsIdentity() : col.primaryKey().autoIncrement()
  await db.schema
    .alterTable('orders')
    .addColumn('version', int64, (col) => col.notNull().defaultTo(1))
    .execute()
  await db.schema
    .createTable('events')
    .addColumn('seq', int64, id)
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('api_key_id', int64)
    .addColumn('resource_version', int64, (col) => col.notNull())
    .addColumn('object', 'text', (col) => col.notNull())
    .addColumn('created_at', int64, (col) => col.notNull())
    .addColumn('fanned_out', 'integer', (col) => col.notNull().defaultTo(0))
    .execute()
  await db.schema
    .createIndex('events_waiting')
    .on('events')
    .column('seq')
    .where(sql.ref('fanned_out'), '=', 0)
    .execute()
  await db.schema.createIndex('events_type_seq').on('events').columns(['type', 'seq']).execute()
  await db.schema.createIndex('events_created_at').on('events').column('created_at').execute()
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', int64, id)
    .addColumn('api_key_id', int64, (col) => col.notNull().references('api_keys.id'))
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('events', 'text', (col) => col.notNull())
    .addColumn('description', 'text')
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('disabled_reason', 'text')
    .addColumn('secret', 'text', (col) => col.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', int64)
    .addColumn('enabled_after_seq', int64, (col) => col.notNull())
    .addColumn('failing_since', int64)
    .addColumn('created_at', int64, (col) => col.notNull())
    .addColumn('deleted_at', int64)
    .execute()
  await db.schema
    .createIndex('webhook_endpoints_account')
    .on('webhook_endpoints')
    .columns(['api_key_id', 'id'])
    .execute()
  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', int64, id)
    .addColumn('event_seq', int64, (col) => col.notNull())
    .addColumn('endpoint_id', int64, (col) => col.notNull())
    .addColumn('attempt', 'integer', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('due_at', int64, (col) => col.notNull())
    .addColumn('lease_token', 'text')
    .addColumn('lease_until', int64)
    .addColumn('at', int64, (col) => col.notNull())
    .addColumn('http_status', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer')
    .addColumn('redelivery', 'integer', (col) => col.notNull().defaultTo(0))
    .execute()
  await db.schema
    .createIndex('webhook_attempts_due')
    .on('webhook_attempts')
    .columns(['due_at', 'id'])
    .where(sql.ref('status'), '=', 'pending')
    .execute()
  // The leases, which claims count against the per-endpoint cap: a few rows however long the queue.
  await db.schema
    .createIndex('webhook_attempts_leased')
    .on('webhook_attempts')
    .column('lease_until')
    .where(sql<boolean>`status = 'pending' and lease_until is not null`)
    .execute()
  // The delivery log, newest first (a status filter reads along it). Every index here is paid three
  // times per event with three endpoints: the purge walks the primary key instead of an index on `at`.
  await db.schema
    .createIndex('webhook_attempts_endpoint')
    .on('webhook_attempts')
    .columns(['endpoint_id', 'id'])
    .execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('webhook_attempts').execute()
  await db.schema.dropTable('webhook_endpoints').execute()
  await db.schema.dropTable('events').execute()
  await db.schema.alterTable('orders').dropColumn('version').execute()
}
