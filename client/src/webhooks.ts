import { nextCursor } from './link.js'
import type {
  DeliveryAttempt,
  NewWebhookEndpoint,
  PetstoreEvent,
  WebhookEndpoint,
  WebhookEndpointPatch,
  WebhookEndpointWithSecret,
} from './models.js'
import type { RequestOptions } from './options.js'
import type { Transport } from './transport.js'

/** One page of a listing, and the cursor of the next when there is one. */
export interface Page<T> {
  items: T[]
  /** Pass it back as `cursor` for the next page; absent on the last page. */
  nextCursor?: string
}

export interface PageOptions extends RequestOptions {
  limit?: number
  cursor?: string
}

/** Webhook endpoints, their delivery log, and the events (experimental operations, CONTRACT §14). */
export interface WebhooksClient {
  /** The secret in the answer is shown this once: keep it to verify deliveries (`verifyWebhook`). */
  createEndpoint(endpoint: NewWebhookEndpoint, options?: RequestOptions): Promise<WebhookEndpointWithSecret>
  listEndpoints(options?: PageOptions): Promise<Page<WebhookEndpoint>>
  getEndpoint(id: string, options?: RequestOptions): Promise<WebhookEndpoint>
  updateEndpoint(id: string, patch: WebhookEndpointPatch, options?: RequestOptions): Promise<WebhookEndpoint>
  deleteEndpoint(id: string, options?: RequestOptions): Promise<void>
  /** A new secret; the old one keeps signing for `graceSeconds` (default a day). */
  rotateSecret(
    id: string,
    graceSeconds?: number,
    options?: RequestOptions,
  ): Promise<WebhookEndpointWithSecret>
  listDeliveries(
    id: string,
    options?: PageOptions & { status?: DeliveryAttempt['status'] },
  ): Promise<Page<DeliveryAttempt>>
  /** Oldest first (commit order); `order: 'desc'` for the newest first. */
  listEvents(
    options?: PageOptions & { type?: PetstoreEvent['type']; order?: 'asc' | 'desc' },
  ): Promise<Page<PetstoreEvent>>
  getEvent(id: string, options?: RequestOptions): Promise<PetstoreEvent>
  /** A new series of attempts, same `webhook-id`, to one endpoint or every subscribed one. */
  redeliver(eventId: string, endpointId?: string, options?: RequestOptions): Promise<string[]>
  /**
   * Sends a `ping` event to this endpoint only (at most 10 a minute per endpoint); the event's id, which its
   * deliveries carry as `webhook-id` and the delivery log lists.
   *
   * @example const eventId = await client.webhooks.sendTestEvent('we_12')
   */
  sendTestEvent(endpointId: string, options?: RequestOptions): Promise<string>
}

function pathWith(path: string, query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value))
  const search = params.toString()
  return search ? `${path}?${search}` : path
}

export function createWebhooksClient(transport: Transport): WebhooksClient {
  const one = (id: string) => `/webhook_endpoints/${encodeURIComponent(id)}`
  async function page<T>(path: string, options: RequestOptions): Promise<Page<T>> {
    const response = await transport.send({ method: 'GET', path }, options)
    const items = (await response.json()) as T[]
    const next = nextCursor(response.headers.get('link'))
    return next === undefined ? { items } : { items, nextCursor: next }
  }
  async function json<T>(request: Parameters<Transport['send']>[0], options: RequestOptions): Promise<T> {
    return (await (await transport.send(request, options)).json()) as T
  }
  return {
    createEndpoint: (endpoint, options = {}) =>
      json({ method: 'POST', path: '/webhook_endpoints', body: endpoint }, options),
    listEndpoints: ({ limit, cursor, ...options } = {}) =>
      page(pathWith('/webhook_endpoints', { limit, cursor }), options),
    getEndpoint: (id, options = {}) => json({ method: 'GET', path: one(id) }, options),
    updateEndpoint: (id, patch, options = {}) =>
      json({ method: 'PATCH', path: one(id), body: patch }, options),
    deleteEndpoint: async (id, options = {}) => {
      await transport.send({ method: 'DELETE', path: one(id) }, options)
    },
    rotateSecret: (id, graceSeconds, options = {}) =>
      json({ method: 'POST', path: `${one(id)}/rotate_secret`, body: { graceSeconds } }, options),
    listDeliveries: (id, { limit, cursor, status, ...options } = {}) =>
      page(pathWith(`${one(id)}/deliveries`, { limit, cursor, status }), options),
    listEvents: ({ limit, cursor, type, order, ...options } = {}) =>
      page(pathWith('/events', { limit, cursor, type, order }), options),
    getEvent: (id, options = {}) =>
      json({ method: 'GET', path: `/events/${encodeURIComponent(id)}` }, options),
    redeliver: async (eventId, endpointId, options = {}) => {
      const path = `/events/${encodeURIComponent(eventId)}/redeliver`
      const accepted = await json<{ endpointIds: string[] }>(
        { method: 'POST', path, body: { endpointId } },
        options,
      )
      return accepted.endpointIds
    },
    sendTestEvent: async (endpointId, options = {}) => {
      const sent = await json<{ eventId: string }>(
        { method: 'POST', path: `${one(endpointId)}/test` },
        options,
      )
      return sent.eventId
    },
  }
}
