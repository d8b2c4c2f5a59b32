import { Webhook } from 'standardwebhooks'
import type { PetstoreEvent } from './models.js'

/** Headers as Node, fetch or a framework gives them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>

/**
 * `@petstore/client/verify-webhook`, an entry of its own: it depends on `standardwebhooks`, which the
 * main entry (used in browsers too) does not.
 *
 * Checks a delivery's Standard Webhooks signature and timestamp (at most 5 minutes old) with the
 * endpoint's secret, and returns the event it carries. Throws when the body was not signed with that
 * secret, was changed, or is too old: answer such a request 400 and do not act on it.
 *
 * @param body the request body exactly as received (text or bytes), before any JSON parsing
 * @example const event = verifyWebhook(rawBody, request.headers, process.env.WEBHOOK_SECRET)
 */
export function verifyWebhook(
  body: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
): PetstoreEvent {
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body)
  return new Webhook(secret).verify(text, flatten(headers)) as PetstoreEvent
}

function flatten(headers: WebhookHeaders): Record<string, string> {
  if (headers instanceof Headers) return Object.fromEntries(headers.entries())
  const flat: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value
  }
  return flat
}
