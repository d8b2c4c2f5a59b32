import { createHmac, randomBytes } from 'node:crypto'

const SECRET_PREFIX = 'whsec_'
/** 32 random bytes: within Standard Webhooks' 24 to 64. */
const SECRET_BYTES = 32

/** A new endpoint secret: `whsec_` and base64 of random bytes (Standard Webhooks' format). */
export const newSecret = (): string => SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64')

/** One `v1,<signature>`: HMAC-SHA256 of `{id}.{timestamp}.{body}` keyed with the secret's decoded bytes. */
function signWith(secret: string, content: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')
  return `v1,${createHmac('sha256', key).update(content).digest('base64')}`
}

/**
 * The `webhook-signature` header of one attempt: one signature per secret, space-separated (the current
 * one and those still in a rotation's grace), so a receiver holding any of them verifies it.
 */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  const content = `${id}.${timestampSeconds}.${body}`
  return secrets.map((secret) => signWith(secret, content)).join(' ')
}

/** Replaced secrets that keep signing at once at most (each delivery then carries up to 4 signatures). */
export const MAX_RETIRED_SECRETS = 3

/** The replaced secrets (`retired_secrets`, JSON) whose grace has not ended at `now`, oldest first. */
export function retiredSecrets(json: string, now: number): { secret: string; until: number }[] {
  return (JSON.parse(json) as { secret: string; until: number }[]).filter((retired) => retired.until > now)
}
