import type { PetstoreEvent, WebhookEndpoint } from '@petstore/client'

export type EventType = PetstoreEvent['type']
export type Subscription = WebhookEndpoint['events'][number]

/**
 * What an endpoint may subscribe to (CONTRACT §14), with its label: everything, a family, or one type.
 * Keyed by the client's own type (generated from the served document), so that a type the service adds
 * and this list lacks fails `npm run typecheck`.
 */
const SUBSCRIPTION_LABELS: Record<Subscription, string> = {
  '*': 'every event (*)',
  'pet.*': 'every pet event (pet.*)',
  'order.*': 'every order event (order.*)',
  'pet.created': 'pet.created',
  'pet.updated': 'pet.updated',
  'pet.deleted': 'pet.deleted',
  'order.placed': 'order.placed',
  'order.approved': 'order.approved',
  'order.delivered': 'order.delivered',
  'order.cancelled': 'order.cancelled',
}

export const SUBSCRIPTIONS = Object.keys(SUBSCRIPTION_LABELS) as Subscription[]
export const subscriptionLabel = (name: Subscription): string => SUBSCRIPTION_LABELS[name]

/**
 * The types the event log's filter offers: every subscribable type, and `ping`, the test event an endpoint
 * is sent on request (listed, never subscribed to).
 */
export const EVENT_TYPES: readonly EventType[] = [
  ...SUBSCRIPTIONS.filter((name): name is Exclude<Subscription, `${string}*`> => !name.endsWith('*')),
  'ping',
]
