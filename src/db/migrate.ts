import { type Migration, Migrator } from 'kysely'
import type { Db } from './database.js'
import * as initial from './migrations/0001_initial.js'

/** Versioned migrations, applied in name order; listed here so the built output needs no file scan. */
const migrations: Record<string, Migration> = {
  '0001_initial': initial,
}

/** Brings the schema to the latest version; returns the names of the migrations it applied. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
  const { error, results = [] } = await migrator.migrateToLatest()
  if (error) throw error
  return results.filter((result) => result.status === 'Success').map((result) => result.migrationName)
}
