import pino, { type DestinationStream, type Logger } from 'pino'
import type { LogLevel } from './config.js'

/** Paths that could carry an API key; pino replaces their values before a line is written. */
const REDACTED = ['req.headers.authorization', 'headers.authorization', 'authorization', 'key', 'apiKey']

export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACTED, censor: '[redacted]' } }, destination)
}
