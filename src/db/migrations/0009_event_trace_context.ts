import type { Kysely } from 'kysely'

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on today's table types
type AnyDb = Kysely<any>

/**
 * Tracing (round 4): an event keeps the W3C `traceparent` of the change that emitted it, so its fan-out
 * and every attempt, on any instance and hours later, link to that change's span. Null when tracing was
 * off. On PostgreSQL the outbox carries it until the event is published.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('events').addColumn('trace_parent', 'text').execute()
  await db.schema.alterTable('event_outbox').addColumn('trace_parent', 'text').execute()
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('event_outbox').dropColumn('trace_parent').execute()
  await db.schema.alterTable('events').dropColumn('trace_parent').execute()
}
