import type { DatabaseConfig } from './config.js'
import { describeDatabase } from './db/describe.js'
import { causeChain } from './error-causes.js'

/** System and PostgreSQL error codes a person meets at start-up, in words (CONTRACT §1). */
const CAUSES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be resolved',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOENT: 'no such directory',
  ENOTDIR: 'a part of the path is not a directory',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  EADDRINUSE: 'address already in use',
  EADDRNOTAVAIL: 'address not available on this machine',
  '28P01': 'password authentication failed',
  '28000': 'authentication refused',
  '3D000': 'the database does not exist',
  '57P03': 'the database is starting up or shutting down',
  '53300': 'too many connections',
}

/** The cause of `error` in words: the first known code along its chain of causes, else its message. */
export function causeInWords(error: unknown): string {
  for (const link of causeChain(error)) {
    const known = CAUSES[String((link as { code?: unknown }).code)]
    if (known) return known
  }
  const { message } = (error ?? {}) as { message?: unknown }
  return typeof message === 'string' && message !== '' ? message : String(error)
}

/** The database named by DATABASE_URL could not be opened or reached at start-up. */
export function databaseStartupError(database: DatabaseConfig, error: unknown): Error {
  return new Error(`DATABASE_URL ${describeDatabase(database)}: ${causeInWords(error)}`)
}

/** The service could not listen on PORT (HOST). */
export function listenStartupError(port: number, host: string, error: unknown): Error {
  const cause = causeInWords(error)
  const hint =
    (error as { code?: unknown }).code === 'EADDRINUSE' ? ': another process listens there; set PORT' : ''
  return new Error(`PORT ${port} on HOST ${host}: ${cause}${hint}`)
}
