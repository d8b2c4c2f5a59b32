import { AppError } from '../errors.js'
import { parseInteger } from '../integer.js'
import { MAX_SAFE_ID } from '../schema-ref.js'
import { sha256 } from '../sha256.js'

/**
 * A page cursor: the last id seen plus a check, so an edited or mangled cursor is a 400 rather than a
 * silently different page. The check is not a secret: every pet is visible to every key anyway.
 */
export function encodeCursor(afterId: number): string {
  const payload = `v1:${afterId}`
  return Buffer.from(`${payload}:${checkOf(payload)}`).toString('base64url')
}

export function decodeCursor(cursor: string): number {
  const text = cursor.length <= 100 ? Buffer.from(cursor, 'base64url').toString('latin1') : ''
  const afterId = parseInteger(/^v1:(\d+):/.exec(text)?.[1] ?? '')
  // Re-encoding must give back exactly what was sent: this checks the check and the encoding at once.
  if (!(afterId >= 1 && afterId <= MAX_SAFE_ID) || encodeCursor(afterId) !== cursor) {
    throw new AppError(
      'invalid_request',
      'cursor is not valid: follow the Link header of the previous page as it is',
    )
  }
  return afterId
}

function checkOf(payload: string): string {
  return sha256(`petstore-cursor:${payload}`).slice(0, 8)
}
