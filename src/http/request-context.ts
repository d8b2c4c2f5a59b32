import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { hasSecretShape } from '../redact-secrets.js'

/** The longest X-Request-Id taken from a client. */
export const MAX_REQUEST_ID_LENGTH = 128
const SANE_REQUEST_ID = new RegExp(`^[A-Za-z0-9._:-]{1,${MAX_REQUEST_ID_LENGTH}}$`)

/**
 * The client's X-Request-Id when it is short and plain, else a fresh UUID. One shaped like an API key (or
 * a webhook secret) is replaced too: the id is echoed in every response and written in every log line (CONTRACT §12).
 */
export function requestIdOf(request: IncomingMessage): string {
  const sent = request.headers['x-request-id']
  return typeof sent === 'string' && SANE_REQUEST_ID.test(sent) && !hasSecretShape(sent) ? sent : randomUUID()
}
