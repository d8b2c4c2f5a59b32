import { type Kysely, PostgresAdapter, sql } from 'kysely'

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on today's table types
type AnyDb = Kysely<any>

/**
 * Deleted endpoints stay in `webhook_endpoints` for good (their id is never reused), and a partner may
 * create and delete as many as its rate allows: the dispatchers' reads, every step and every second, must
 * not grow with them. They read the enabled live endpoints along `webhook_endpoints_enabled`, their own
 * leases (on SQLite every holder's, to find the dead) along `webhook_endpoints_lease_owner`, and the ended endpoints
 * whose pending attempts may not all be ended yet along `webhook_endpoints_sweep`: an ending
 * sets `sweep_until` (the sweep may let it go once that time has passed and none is pending), and
 * nothing else does. Endpoints ended before this migration with attempts still pending are marked now.
 */
export async function up(db: AnyDb): Promise<void> {
  const int64 = db.getExecutor().adapter instanceof PostgresAdapter ? 'bigint' : 'integer'
  await db.schema.alterTable('webhook_endpoints').addColumn('sweep_until', int64).execute()
  await db.schema
    .createIndex('webhook_endpoints_enabled')
    .on('webhook_endpoints')
    .column('id')
    .where(sql<boolean>`status = 'enabled' and deleted_at is null`)
    .execute()
  await db.schema
    .createIndex('webhook_endpoints_sweep')
    .on('webhook_endpoints')
    .column('id')
    .where(sql.ref('sweep_until'), 'is not', null)
    .execute()
  await db.schema
    .createIndex('webhook_endpoints_lease_owner')
    .on('webhook_endpoints')
    .column('lease_owner')
    .where(sql.ref('lease_owner'), 'is not', null)
    .execute()
  await db
    .updateTable('webhook_endpoints as e')
    .set({ sweep_until: 0 })
    .where((eb) => eb.or([eb('e.deleted_at', 'is not', null), eb('e.status', '<>', 'enabled')]))
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('webhook_attempts as a')
          .select('a.id')
          .whereRef('a.endpoint_id', '=', 'e.id')
          .where('a.status', '=', 'pending'),
      ),
    )
    .execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropIndex('webhook_endpoints_lease_owner').execute()
  await db.schema.dropIndex('webhook_endpoints_sweep').execute()
  await db.schema.dropIndex('webhook_endpoints_enabled').execute()
  await db.schema.alterTable('webhook_endpoints').dropColumn('sweep_until').execute()
}
