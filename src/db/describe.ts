import { resolve } from 'node:path'
import type { DatabaseConfig } from '../config.js'

/**
 * The database in use, for a person: an absolute SQLite path, or the PostgreSQL URL with its password as
 * `***`. The CLI prints it on stderr; the service logs it once at start.
 */
export function describeDatabase(database: DatabaseConfig): string {
  if (database.kind === 'sqlite') return `sqlite:${resolve(database.path)}`
  const url = new URL(database.url)
  if (url.password) url.password = '***'
  if (url.searchParams.has('password')) url.searchParams.set('password', '***')
  return url.href
}
