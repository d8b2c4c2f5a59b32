import { resolve } from 'node:path'
import type { DatabaseConfig } from '../config.js'
import { redactUrl } from '../redact-url.js'

/**
 * The database in use, for a person: an absolute SQLite path, or the PostgreSQL URL with its password as
 * `***`. The CLI prints it on stderr; the service logs it once at start.
 */
export function describeDatabase(database: DatabaseConfig): string {
  return database.kind === 'sqlite' ? `sqlite:${resolve(database.path)}` : redactUrl(database.url)
}
