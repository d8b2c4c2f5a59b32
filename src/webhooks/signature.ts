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

/** A secret a rotation replaced, signing too until its grace ends (`until`, ms). */
export type RetiredSecret = { secret: string; until: number }

/** The replaced secrets as stored (`retired_secrets`, JSON), oldest first. */
export const parseRetiredSecrets = (json: string): RetiredSecret[] => JSON.parse(json) as RetiredSecret[]

/** The replaced secrets (`retired_secrets`, JSON) whose grace has not ended at `now`, oldest first. */
export const retiredSecrets = (json: string, now: number): RetiredSecret[] =>
  inGrace(parseRetiredSecrets(json), now)

const inGrace = (retired: readonly RetiredSecret[], now: number) => retired.filter((one) => one.until > now)

/** The secrets that sign an attempt started at `now`: the current one and the replaced ones still in their grace. */
export const signingSecrets = (
  endpoint: { secret: string; retired: readonly RetiredSecret[] },
  now: number,
): string[] => [endpoint.secret, ...inGrace(endpoint.retired, now).map((one) => one.secret)]
