import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** The client's X-Request-Id when it is short and plain, else a fresh UUID. */
export function requestIdOf(request: IncomingMessage): string {
  const sent = request.headers['x-request-id']
  return typeof sent === 'string' && SANE_REQUEST_ID.test(sent) ? sent : randomUUID()
}
