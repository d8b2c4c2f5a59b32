import { type Migration, Migrator } from 'kysely'
import type { DatabaseConfig } from '../config.js'
import { connectDatabase } from './connect.js'
import type { Db } from './database.js'
import * as initial from './migrations/0001_initial.js'
import * as storageProbe from './migrations/0002_storage_probe.js'
import * as keyLifecycle from './migrations/0003_key_lifecycle.js'
import * as petLifecycle from './migrations/0004_pet_lifecycle.js'
import * as storeOrders from './migrations/0005_store_orders.js'
import * as petStatusCounts from './migrations/0006_pet_status_counts.js'
import * as eventsWebhooks from './migrations/0007_events_webhooks.js'
import * as webhookLanes from './migrations/0008_webhook_lanes.js'
import * as eventTraceContext from './migrations/0009_event_trace_context.js'
import * as idempotentResponses from './migrations/0010_idempotent_responses.js'
import * as subscriptionHistoryOrder from './migrations/0011_subscription_history_order.js'
import * as endpointPartialIndexes from './migrations/0012_endpoint_partial_indexes.js'

/** Versioned migrations, applied in name order; listed here so the built output needs no file scan. */
const migrations: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_storage_probe': storageProbe,
  '0003_key_lifecycle': keyLifecycle,
  '0004_pet_lifecycle': petLifecycle,
  '0005_store_orders': storeOrders,
  '0006_pet_status_counts': petStatusCounts,
  '0007_events_webhooks': eventsWebhooks,
  '0008_webhook_lanes': webhookLanes,
  '0009_event_trace_context': eventTraceContext,
  '0010_idempotent_responses': idempotentResponses,
  '0011_subscription_history_order': subscriptionHistoryOrder,
  '0012_endpoint_partial_indexes': endpointPartialIndexes,
}

/** Every migration's name, in the order they apply. */
export const MIGRATION_NAMES = Object.keys(migrations)

/** Kysely's migrator over the list above (tests use it to stop at an earlier version). */
export const createMigrator = (db: Db) =>
  new Migrator({ db, provider: { getMigrations: async () => migrations } })

/** Brings the schema to the latest version; returns the names of the migrations it applied. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const { error, results = [] } = await createMigrator(db).migrateToLatest()
  if (error) throw error
  return results.filter((result) => result.status === 'Success').map((result) => result.migrationName)
}

/** Migrates on a connection of its own, without the requests' deadlines, and closes it. */
export async function migrateDatabase(database: DatabaseConfig): Promise<string[]> {
  const handle = await connectDatabase(database, false)
  try {
    return await migrateToLatest(handle.db)
  } finally {
    await handle.close()
  }
}
