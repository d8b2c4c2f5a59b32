import { type Kysely, PostgresAdapter, sql } from 'kysely'

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on today's table types
type AnyDb = Kysely<any>

/**
 * The inventory as maintained counts (CONTRACT §11): every insert, delete or change of a live pet's status
 * appends a +1 or a -1 row to `pet_status_counts`, from a trigger, in the same transaction as the change.
 * Appending (rather than updating one counter row per status) means two writers never wait for each other's
 * counter row, so concurrent orders on PostgreSQL cannot contend or deadlock on it. The inventory is the sum
 * per status; `compactStatusCounts` (orders/inventory.repository.ts) folds the rows into one per status now and then.
 */
export async function up(db: AnyDb): Promise<void> {
  // PostgreSQL runs each migration in a transaction; SQLite's migrator does not, so it gets one here: a
  // writer of another process must not slip in between the seed and the triggers (counted twice or never).
  if (db.isTransaction) await create(db)
  else await db.transaction().execute(create)
}

async function create(db: AnyDb): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  // The strongest lock this migration needs (for dropping the index), taken first: raising a weaker one later
  // (the triggers') deadlocks with a previous version's transaction that read pets and then writes them.
  // Writers of pets wait for the migration (a count over pets: well under a second at a million rows).
  if (postgres) await sql`lock table pets in access exclusive mode`.execute(db)
  await db.schema
    .createTable('pet_status_counts')
    .addColumn('id', postgres ? 'bigint' : 'integer', (col) =>
      postgres ? col.primaryKey().generatedByDefaultAsIdentity() : col.primaryKey().autoIncrement(),
    )
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('count', postgres ? 'bigint' : 'integer', (col) => col.notNull())
    .execute()
  // Triggers, then the seed, with writers of `pets` locked out until this transaction commits.
  await (postgres ? createPostgresTriggers(db) : createSqliteTriggers(db))
  await sql`
    insert into pet_status_counts (status, count)
    select status, count(*) from pets where deleted_at is null and status is not null group by status
  `.execute(db)
  // The counts replace the partial index the inventory used to scan.
  await db.schema.dropIndex('pets_live_status').execute()
}

async function createSqliteTriggers(db: AnyDb): Promise<void> {
  await sql`
    create trigger pets_count_insert after insert on pets
    when new.status is not null and new.deleted_at is null
    begin insert into pet_status_counts (status, count) values (new.status, 1); end
  `.execute(db)
  await sql`
    create trigger pets_count_delete after delete on pets
    when old.status is not null and old.deleted_at is null
    begin insert into pet_status_counts (status, count) values (old.status, -1); end
  `.execute(db)
  await sql`
    create trigger pets_count_update after update of status, deleted_at on pets
    when old.status is not new.status or old.deleted_at is not new.deleted_at
    begin
      insert into pet_status_counts (status, count)
        select old.status, -1 where old.status is not null and old.deleted_at is null;
      insert into pet_status_counts (status, count)
        select new.status, 1 where new.status is not null and new.deleted_at is null;
    end
  `.execute(db)
}

async function createPostgresTriggers(db: AnyDb): Promise<void> {
  await sql`
    create function pets_count_status() returns trigger language plpgsql as $$
    begin
      if tg_op <> 'INSERT' and old.status is not null and old.deleted_at is null then
        insert into pet_status_counts (status, count) values (old.status, -1);
      end if;
      if tg_op <> 'DELETE' and new.status is not null and new.deleted_at is null then
        insert into pet_status_counts (status, count) values (new.status, 1);
      end if;
      return null;
    end
    $$
  `.execute(db)
  await sql`
    create trigger pets_count_insert_delete after insert or delete on pets
    for each row execute function pets_count_status()
  `.execute(db)
  await sql`
    create trigger pets_count_update after update of status, deleted_at on pets for each row
    when (old.status is distinct from new.status or old.deleted_at is distinct from new.deleted_at)
    execute function pets_count_status()
  `.execute(db)
  // Row triggers do not fire on TRUNCATE (SQLite has none: its DELETE fires them).
  await sql`
    create function pets_count_truncate() returns trigger language plpgsql as $$
    begin
      delete from pet_status_counts;
      return null;
    end
    $$
  `.execute(db)
  await sql`
    create trigger pets_count_truncate after truncate on pets
    for each statement execute function pets_count_truncate()
  `.execute(db)
}

export async function down(db: AnyDb): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  if (postgres) {
    for (const name of ['pets_count_insert_delete', 'pets_count_update', 'pets_count_truncate'])
      await sql`drop trigger ${sql.id(name)} on pets`.execute(db)
    await sql`drop function pets_count_status()`.execute(db)
    await sql`drop function pets_count_truncate()`.execute(db)
  } else {
    for (const name of ['pets_count_insert', 'pets_count_delete', 'pets_count_update'])
      await sql`drop trigger ${sql.id(name)}`.execute(db)
  }
  await db.schema.dropTable('pet_status_counts').execute()
  await db.schema
    .createIndex('pets_live_status')
    .on('pets')
    .column('status')
    .where(sql.ref('deleted_at'), 'is', null)
    .execute()
}
