/**
 * Anything shaped like a secret, by the one list of shapes every redaction uses: an API key (CONTRACT §5,
 * §12), the prefix of either environment and what follows it; and a webhook signing secret, `whsec_` and
 * base64 (Standard Webhooks' format, webhooks/signature.ts), which a partner may paste where it does not
 * belong as a client does a key. Redaction goes by these shapes wherever a secret stands, so one sent in
 * the wrong place (a query parameter of any name, the path, User-Agent, an error message) never reaches a
 * log line, a span or a response.
 */
const SECRET_SHAPES = /ps_(?:live|test)_[A-Za-z0-9_-]*|whsec_[A-Za-z0-9+/=]+/g
const REDACTED = '[redacted]'

/** Whether `text` holds something shaped like a secret. */
export function hasSecretShape(text: string): boolean {
  // Every log line comes here: one without either shape's prefix is not searched further.
  if (!text.includes('ps_') && !text.includes('whsec_')) return false
  SECRET_SHAPES.lastIndex = 0
  return SECRET_SHAPES.test(text)
}

/** `text` with every secret-shaped run replaced; most text is returned as it is, without a copy. */
export function redactSecrets(text: string): string {
  return hasSecretShape(text) ? text.replace(SECRET_SHAPES, REDACTED) : text
}

/** One percent-encoded ASCII character (a secret is ASCII: only those can spell one). */
const ENCODED_ASCII = /%([0-7][0-9A-Fa-f])/g

/**
 * A request target as it may be logged: when it spells a secret once its ASCII percent-escapes are decoded
 * (`?a=ps%5Flive%5F…`, `%2570s_live_…` decoded twice, `whsec_…%2B…`), the decoded target with the secret
 * redacted; else the target unchanged.
 */
export function redactSecretsInTarget(target: string): string {
  if (!target.includes('%')) return redactSecrets(target)
  let decoded = target
  for (let round = 0; round < 3 && decoded.includes('%'); round++) {
    const next = decoded.replace(ENCODED_ASCII, (_, hex: string) =>
      String.fromCharCode(Number.parseInt(hex, 16)),
    )
    if (next === decoded) break
    decoded = next
  }
  return hasSecretShape(decoded) ? decoded.replace(SECRET_SHAPES, REDACTED) : target
}
