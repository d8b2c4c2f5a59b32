import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import type { DatabaseConfig } from '../config.js'
import { type CliIo, UsageError } from './io.js'

/**
 * Refuses the default SQLite file (DATABASE_URL not set) when it does not exist: a keys command run in
 * another folder than the service's would create an empty database there and issue keys no service reads.
 */
export function requireExistingDatabase(database: DatabaseConfig, env: CliIo['env']): void {
  if (env.DATABASE_URL !== undefined || database.kind !== 'sqlite') return
  const path = resolve(database.path)
  if (existsSync(path)) return
  throw new UsageError(
    `no database at ${path} (DATABASE_URL is not set): set DATABASE_URL to the service's database, or pass --create-db to create one there`,
  )
}
