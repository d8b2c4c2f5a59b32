/**
 * Anything shaped like an API key (CONTRACT §5, §12): the prefix of either environment and what follows it.
 * Redaction goes by this shape wherever a key stands, so a key sent in the wrong place (a query parameter
 * of any name, the path, User-Agent, an error message) never reaches a log line or a response.
 */
const KEY_SHAPE = /ps_(?:live|test)_[A-Za-z0-9_-]*/g
const REDACTED = '[redacted]'

/** Whether `text` holds something shaped like a key. */
export function hasKeyShape(text: string): boolean {
  KEY_SHAPE.lastIndex = 0
  return text.includes('ps_') && KEY_SHAPE.test(text)
}

/** `text` with every key-shaped run replaced; most text is returned as it is, without a copy. */
export function redactKeys(text: string): string {
  return hasKeyShape(text) ? text.replace(KEY_SHAPE, REDACTED) : text
}

/** One percent-encoded ASCII character (a key is ASCII: only those can spell one). */
const ENCODED_ASCII = /%([0-7][0-9A-Fa-f])/g

/**
 * A request target as it may be logged: when it spells a key once its ASCII percent-escapes are decoded
 * (`?a=ps%5Flive%5F…`, `%2570s_live_…` decoded twice), the decoded target with the key redacted; else the
 * target unchanged.
 */
export function redactKeysInTarget(target: string): string {
  if (!target.includes('%')) return redactKeys(target)
  let decoded = target
  for (let round = 0; round < 3 && decoded.includes('%'); round++) {
    const next = decoded.replace(ENCODED_ASCII, (_, hex: string) =>
      String.fromCharCode(Number.parseInt(hex, 16)),
    )
    if (next === decoded) break
    decoded = next
  }
  return hasKeyShape(decoded) ? decoded.replace(KEY_SHAPE, REDACTED) : target
}
