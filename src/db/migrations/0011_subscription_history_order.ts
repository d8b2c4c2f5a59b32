import { type Kysely, PostgresAdapter, sql } from 'kysely'

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on today's table types
type AnyDb = Kysely<any>

/**
 * Numbers the kept subscriptions in the order they were kept (`id`). Two PATCHes of an endpoint's
 * `events` with no event committed between them keep two rows with the same `until_seq`; the first is the
 * one in force at those events' commit, and neither database promises to read rows back in the order they
 * were written. PostgreSQL adds the column in place (rows kept before it are numbered in the order they
 * are stored); SQLite cannot add a generated column, so the table is copied in insertion order (`rowid`).
 * The previous version's insert (without `id`) still runs against the new table.
 */
export async function up(db: AnyDb): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await db.schema
      .alterTable('webhook_subscription_history')
      .addColumn('id', 'bigint', (col) => col.generatedByDefaultAsIdentity().primaryKey())
      .execute()
    return
  }
  await rebuild(db, true)
}

export async function down(db: AnyDb): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await db.schema.alterTable('webhook_subscription_history').dropColumn('id').execute()
    return
  }
  await rebuild(db, false)
}

/** SQLite: the table again, with or without `id`, its rows copied in the order they were written. */
async function rebuild(db: AnyDb, numbered: boolean): Promise<void> {
  await db.schema.dropIndex('webhook_subscription_history_endpoint').execute()
  await db.schema
    .alterTable('webhook_subscription_history')
    .renameTo('webhook_subscription_history_old')
    .execute()
  let table = db.schema.createTable('webhook_subscription_history')
  if (numbered) table = table.addColumn('id', 'integer', (col) => col.primaryKey().autoIncrement())
  await table
    .addColumn('endpoint_id', 'integer', (col) => col.notNull())
    .addColumn('until_seq', 'integer', (col) => col.notNull())
    .addColumn('events', 'text', (col) => col.notNull())
    .execute()
  await sql`insert into webhook_subscription_history (endpoint_id, until_seq, events)
    select endpoint_id, until_seq, events from webhook_subscription_history_old order by rowid`.execute(db)
  await db.schema.dropTable('webhook_subscription_history_old').execute()
  await db.schema
    .createIndex('webhook_subscription_history_endpoint')
    .on('webhook_subscription_history')
    .columns(['endpoint_id', 'until_seq'])
    .execute()
}
