import Type, { type Static } from 'typebox'
import { EVENT_ID_DIGITS, EVENT_TYPES, LISTED_EVENT_TYPES } from '../events/events.repository.js'
import { Order } from '../orders/orders.schemas.js'
import { CursorQuery } from '../pagination/keyset.js'
import { Pet } from '../pets/pets.schemas.js'
import { ref } from '../schema-ref.js'
import { MAX_URL_LENGTH } from './address.js'

/** What an endpoint may subscribe to: an event type, a family (`pet.*`, `order.*`) or everything (`*`). */
export const SUBSCRIPTIONS = [...EVENT_TYPES, 'pet.*', 'order.*', '*'] as const

/** How long the secret before a rotation keeps signing, at most (7 days); the default is a day. */
export const MAX_GRACE_SECONDS = 7 * 24 * 60 * 60
export const DEFAULT_GRACE_SECONDS = 24 * 60 * 60

const EndpointId = Type.String({
  pattern: '^we_[1-9][0-9]{0,14}$',
  'x-expected': 'an endpoint id like we_12',
  description: 'The endpoint, `we_…`.',
})
const EventId = Type.String({
  pattern: `^evt_[0-9]{${EVENT_ID_DIGITS}}$`,
  'x-expected': 'an event id like evt_0000000000000042',
  description: 'The event, `evt_…`: ids sort as text in commit order.',
})
const Url = Type.String({
  minLength: 1,
  maxLength: MAX_URL_LENGTH,
  description: 'Where deliveries are POSTed: `https`, a public address, no credentials.',
})
const Subscriptions = Type.Array(Type.Enum([...SUBSCRIPTIONS], { type: 'string' }), {
  minItems: 1,
  maxItems: SUBSCRIPTIONS.length,
  uniqueItems: true,
  description: 'Event types, families such as `order.*`, or `*` for all.',
})
const Description = Type.String({ maxLength: 500, description: 'Free text for the owner.' })
const EndpointStatus = Type.Enum(['enabled', 'disabled'], { type: 'string' })

export const WebhookEndpoint = Type.Object(
  {
    id: EndpointId,
    url: Url,
    events: Subscriptions,
    description: Type.Union([Description, Type.Null()]),
    status: EndpointStatus,
    disabledReason: Type.Union([Type.String(), Type.Null()], {
      description: 'Why the service disabled it (a 410, five days of failures); null otherwise.',
    }),
    createdAt: Type.String({ format: 'date-time' }),
  },
  {
    $id: 'WebhookEndpoint',
    additionalProperties: false,
    description: 'A webhook endpoint (never its secret).',
  },
)

export const WebhookEndpointWithSecret = Type.Object(
  {
    ...WebhookEndpoint.properties,
    secret: Type.String({
      pattern: '^whsec_[A-Za-z0-9+/=]+$',
      description: 'The signing secret (Standard Webhooks): shown in this response only.',
    }),
  },
  {
    $id: 'WebhookEndpointWithSecret',
    additionalProperties: false,
    description: 'A webhook endpoint with its new signing secret, shown once.',
  },
)

export const WebhookEndpoints = Type.Array(ref(WebhookEndpoint), {
  $id: 'WebhookEndpoints',
  description: "The calling account's endpoints, in ascending id order.",
})

export const NewWebhookEndpoint = Type.Object(
  { url: Url, events: Subscriptions, description: Type.Optional(Description) },
  { $id: 'NewWebhookEndpoint', additionalProperties: false, description: 'Request body of a new endpoint.' },
)

export const WebhookEndpointPatch = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Subscriptions),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    status: Type.Optional(EndpointStatus),
  },
  {
    $id: 'WebhookEndpointPatch',
    additionalProperties: false,
    minProperties: 1,
    description: 'The fields to change; re-enabling does not replay what was missed meanwhile.',
  },
)

export const SecretRotation = Type.Object(
  {
    graceSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_GRACE_SECONDS,
        default: DEFAULT_GRACE_SECONDS,
        description: 'How long the old secret keeps signing too (two signatures per delivery).',
      }),
    ),
  },
  { $id: 'SecretRotation', additionalProperties: false, description: 'Request body of a secret rotation.' },
)

const EventType = Type.Enum([...LISTED_EVENT_TYPES], {
  type: 'string',
  description: 'What changed; `ping` is a test event, sent to the one endpoint it tests.',
})

const PingObject = Type.Object(
  { endpointId: EndpointId },
  { additionalProperties: false, description: 'A `ping`: the endpoint it was sent to.' },
)

export const Event = Type.Object(
  {
    id: EventId,
    type: EventType,
    createdAt: Type.String({
      format: 'date-time',
      description: 'When the change committed (a `ping`: when it was sent).',
    }),
    resourceVersion: Type.Integer({
      minimum: 1,
      description:
        'Grows with every change of this pet or order: drop an event older than one you have. Always 1 for ' +
        'a `ping`.',
    }),
    data: Type.Object(
      {
        object: Type.Union([ref(Pet), ref(Order), PingObject], {
          description: 'The Pet or Order right after the change; for a `ping`, `{endpointId}`.',
        }),
      },
      { additionalProperties: false },
    ),
  },
  {
    $id: 'Event',
    additionalProperties: false,
    description: 'A change of a pet or an order, or a test event (`ping`).',
  },
)

export const Events = Type.Array(ref(Event), { $id: 'Events', description: 'Events in commit order.' })

export const Redelivery = Type.Object(
  { endpointId: Type.Optional(EndpointId) },
  { $id: 'Redelivery', additionalProperties: false, description: 'Request body of a redelivery.' },
)

export const RedeliveryAccepted = Type.Object(
  { eventId: EventId, endpointIds: Type.Array(EndpointId) },
  {
    $id: 'RedeliveryAccepted',
    additionalProperties: false,
    description: 'The endpoints a new series goes to.',
  },
)

export const TestEventAccepted = Type.Object(
  { eventId: EventId },
  {
    $id: 'TestEventAccepted',
    additionalProperties: false,
    description: 'The `ping` event on its way to the endpoint.',
  },
)

const AttemptStatus = Type.Enum(['pending', 'succeeded', 'failed'], { type: 'string' })

export const DeliveryAttempt = Type.Object(
  {
    eventId: EventId,
    attempt: Type.Integer({
      minimum: 1,
      description: 'Its number in its series (a redelivery starts again at 1).',
    }),
    at: Type.String({ format: 'date-time', description: 'When it was made, or is due (pending).' }),
    status: AttemptStatus,
    httpStatus: Type.Union([Type.Integer(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
    durationMs: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  },
  { $id: 'DeliveryAttempt', additionalProperties: false, description: 'One attempt to deliver an event.' },
)

export const DeliveryAttempts = Type.Array(ref(DeliveryAttempt), {
  $id: 'DeliveryAttempts',
  description: 'Attempts, newest first.',
})

export const EndpointParams = Type.Object({ endpointId: EndpointId })
export const EventParams = Type.Object({ eventId: EventId })

const Limit = Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 }))
const Cursor = CursorQuery
export const ListEndpointsQuery = Type.Object({ limit: Limit, cursor: Cursor })
export const ListDeliveriesQuery = Type.Object({
  status: Type.Optional(AttemptStatus),
  limit: Limit,
  cursor: Cursor,
})
export const ListEventsQuery = Type.Object({
  type: Type.Optional(Type.Enum([...LISTED_EVENT_TYPES], { type: 'string' })),
  order: Type.Optional(
    Type.Enum(['asc', 'desc'], {
      type: 'string',
      description:
        '`asc` (the default): oldest first, in commit order. `desc`: newest first, for a look at what ' +
        'happened last; its pages go back in time.',
    }),
  ),
  limit: Limit,
  cursor: Cursor,
})

export type WebhookEndpoint = Static<typeof WebhookEndpoint>
export type WebhookEndpointPatch = Static<typeof WebhookEndpointPatch>
export type NewWebhookEndpoint = Static<typeof NewWebhookEndpoint>
export type DeliveryAttempt = Static<typeof DeliveryAttempt>
export type AttemptStatus = Static<typeof AttemptStatus>

export const webhookSchemas = [
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookEndpoints,
  NewWebhookEndpoint,
  WebhookEndpointPatch,
  SecretRotation,
  Event,
  Events,
  Redelivery,
  RedeliveryAccepted,
  TestEventAccepted,
  DeliveryAttempt,
  DeliveryAttempts,
]
