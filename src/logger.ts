import pino, { type DestinationStream, type Logger } from 'pino'
import type { LogLevel } from './config.js'
import { redactSecrets } from './redact-secrets.js'

/** Paths that could carry an API key; pino replaces their values before a line is written. */
const REDACTED = ['req.headers.authorization', 'headers.authorization', 'authorization', 'key', 'apiKey']

/** Lines are written to stdout in chunks of at least this many bytes (one system call per ~20 lines)... */
export const BUFFER_BYTES = 4096
/** ...and at least this often, so a quiet service's lines are not held back. */
export const FLUSH_INTERVAL_MS = 1000

/**
 * The service's logger: JSON lines on stdout, or on `destination` when given (tests, the CLI's stderr).
 * Stdout is buffered: a write per line was a tenth of a request's cost. The buffer is flushed every
 * second and when the process exits; a crash that kills the process (SIGKILL) loses at most that second.
 */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = {
    level,
    redact: { paths: REDACTED, censor: '[redacted]' },
    // The last line of defence (CONTRACT §12): whatever a line says, nothing shaped like a secret is written.
    hooks: { streamWrite: redactSecrets },
  }
  if (destination || level === 'silent') return pino(options, destination)
  const stdout = pino.destination({ dest: 1, minLength: BUFFER_BYTES, sync: false })
  setInterval(() => stdout.flush(), FLUSH_INTERVAL_MS).unref()
  process.once('exit', () => {
    try {
      stdout.flushSync()
    } catch {
      // A write still in flight: sonic-boom finishes it before the process goes.
    }
  })
  return pino(options, stdout)
}
