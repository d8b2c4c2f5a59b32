import { type ColumnDefinitionBuilder, type Kysely, PostgresAdapter, sql } from 'kysely'

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on today's table types
type AnyDb = Kysely<any>

/**
 * Webhooks at partner scale (CONTRACT §14, round 4). A dispatcher now leases an *endpoint* (`lease_owner`,
 * `lease_until`, renewed while it holds it) instead of single attempts, so one instance alone sends to an
 * endpoint and keeps its 4 requests in flight without a step between them. `failures_in_row` opens the
 * endpoint's circuit. An event is fanned out in bounded parts: `fan_out_after` is the last endpoint id it
 * was fanned out to. The due index leads with the endpoint, so a claim reads one endpoint's queue however
 * long another's is; the purge of finished attempts reads along `at`. `webhook_subscription_history`
 * keeps an endpoint's earlier subscriptions, each with the last event it held for, so that an event is
 * judged by the subscription in force at its commit. On PostgreSQL a change writes its events to
 * `event_outbox` (no lock between writers) and a publisher moves them to `events`, numbering them in the
 * order it publishes them. Additive, but for two indexes that the new claims no longer read.
 */
export async function up(db: AnyDb): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  const int64 = postgres ? 'bigint' : 'integer'
  await db.schema.alterTable('webhook_endpoints').addColumn('lease_owner', 'text').execute()
  await db.schema.alterTable('webhook_endpoints').addColumn('lease_until', int64).execute()
  await db.schema
    .alterTable('webhook_endpoints')
    .addColumn('failures_in_row', 'integer', (col) => col.notNull().defaultTo(0))
    .execute()
  await db.schema
    .alterTable('events')
    .addColumn('fan_out_after', int64, (col) => col.notNull().defaultTo(0))
    .execute()
  const id = (col: ColumnDefinitionBuilder) =>
    postgres ? col.primaryKey().generatedByDefaultAsIdentity() : col.primaryKey().autoIncrement()
  await db.schema
    .createTable('event_outbox')
    .addColumn('id', int64, id)
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('api_key_id', int64)
    .addColumn('resource_version', int64, (col) => col.notNull())
    .addColumn('object', 'text', (col) => col.notNull())
    .addColumn('created_at', int64, (col) => col.notNull())
    .execute()
  await db.schema
    .createTable('webhook_subscription_history')
    .addColumn('endpoint_id', int64, (col) => col.notNull())
    .addColumn('until_seq', int64, (col) => col.notNull())
    .addColumn('events', 'text', (col) => col.notNull())
    .execute()
  await db.schema
    .createIndex('webhook_subscription_history_endpoint')
    .on('webhook_subscription_history')
    .columns(['endpoint_id', 'until_seq'])
    .execute()
  // Every secret still in its grace keeps signing, not only the last one replaced (previous_secret and
  // previous_secret_until are read no more).
  await db.schema
    .alterTable('webhook_endpoints')
    .addColumn('retired_secrets', 'text', (col) => col.notNull().defaultTo('[]'))
    .execute()
  const rotated = await db
    .selectFrom('webhook_endpoints')
    .select(['id', 'previous_secret', 'previous_secret_until'])
    .where('previous_secret', 'is not', null)
    .execute()
  for (const row of rotated) {
    const retired = [{ secret: row.previous_secret, until: Number(row.previous_secret_until ?? 0) }]
    await db
      .updateTable('webhook_endpoints')
      .set({ retired_secrets: JSON.stringify(retired) })
      .where('id', '=', row.id)
      .execute()
  }
  await db.schema.dropIndex('webhook_attempts_due').execute()
  await db.schema.dropIndex('webhook_attempts_leased').execute()
  await db.schema
    .createIndex('webhook_attempts_queue')
    .on('webhook_attempts')
    .columns(['endpoint_id', 'due_at', 'id'])
    .where(sql.ref('status'), '=', 'pending')
    .execute()
  await db.schema
    .createIndex('webhook_attempts_finished')
    .on('webhook_attempts')
    .columns(['at', 'id'])
    .where(sql.ref('status'), '<>', 'pending')
    .execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('webhook_subscription_history').execute()
  await db.schema.dropTable('event_outbox').execute()
  await db.schema.dropIndex('webhook_attempts_finished').execute()
  await db.schema.dropIndex('webhook_attempts_queue').execute()
  await db.schema
    .createIndex('webhook_attempts_due')
    .on('webhook_attempts')
    .columns(['due_at', 'id'])
    .where(sql.ref('status'), '=', 'pending')
    .execute()
  await db.schema
    .createIndex('webhook_attempts_leased')
    .on('webhook_attempts')
    .column('lease_until')
    .where(sql<boolean>`status = 'pending' and lease_until is not null`)
    .execute()
  await db.schema.alterTable('events').dropColumn('fan_out_after').execute()
  await db.schema.alterTable('webhook_endpoints').dropColumn('retired_secrets').execute()
  await db.schema.alterTable('webhook_endpoints').dropColumn('failures_in_row').execute()
  await db.schema.alterTable('webhook_endpoints').dropColumn('lease_until').execute()
  await db.schema.alterTable('webhook_endpoints').dropColumn('lease_owner').execute()
}
