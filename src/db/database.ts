import type { Generated, Kysely } from 'kysely'

/** Table shapes as stored. Times are Unix milliseconds; ids are int64 within 2^53 - 1. */
export interface PetsTable {
  id: Generated<number>
  name: string
  category_id: number
  status: string | null
  created_at: number
  /** 1 when created, one more on every change: the pet's ETag. */
  version: Generated<number>
  /** Set when the pet was deleted: reads skip it, its id is never reused. */
  deleted_at: number | null
}

export interface ApiKeysTable {
  id: Generated<number>
  key_hash: string
  prefix: string
  name: string | null
  plan: string
  environment: string
  /** Only Enterprise keys carry their own limits; other plans take the plan's numbers. */
  per_minute: number | null
  per_day: number | null
  created_at: number
  revoked_at: number | null
  /** `read` (GET and HEAD only) or `write` (everything). */
  scope: Generated<string>
  expires_at: number | null
  /** Last request seen, as of the latest usage flush of any instance. */
  last_used_at: number | null
}

/** A secret replaced by `keys rotate`: it still works until `usable_until`, then is named in the 401. */
export interface RetiredKeySecretsTable {
  key_hash: string
  api_key_id: number
  retired_at: number
  usable_until: number
}

/** Requests per account, UTC day (`2026-11-23`) and status class (`2xx`, `4xx`, `429`, `5xx`). */
export interface KeyUsageTable {
  api_key_id: number
  day: string
  class: string
  requests: number
}

export interface IdempotencyKeysTable {
  api_key_id: number
  key: string
  request_hash: string
  /** Null only inside the transaction that creates the pet: never visible to another request. */
  pet_id: number | null
  /** Set instead of pet_id when the key placed an order. */
  order_id: number | null
  created_at: number
  /** The body the first request answered with, as JSON (null in records from before migration 0010). */
  response: string | null
}

/** A store order: the account's (`api_key_id`), for one pet. */
export interface OrdersTable {
  id: Generated<number>
  api_key_id: number
  pet_id: number
  /** `placed`, `approved`, `delivered` or `cancelled`. */
  status: string
  created_at: number
  updated_at: number
  /** 1 when placed, one more on every change: its events' `resourceVersion`. */
  version: Generated<number>
}

/** +1 or -1 per change of a live pet's status, appended by triggers; the inventory is the sum per status. */
export interface PetStatusCountsTable {
  id: Generated<number>
  status: string
  count: number
}

/** The outbox (CONTRACT §14): one row per committed change, written in the change's transaction. */
export interface EventsTable {
  /** Publication order: on PostgreSQL one publisher at a time numbers events (events.publisher.ts). */
  seq: Generated<number>
  type: string
  /** The account an `order.*` event belongs to; null: every account sees it (`pet.*`). */
  api_key_id: number | null
  resource_version: number
  /** The Pet or Order as the API returned it right after the change, as JSON text. */
  object: string
  created_at: number
  /** 0 until a dispatcher made the event's deliveries (webhooks/fan-out). */
  fanned_out: Generated<number>
  /** While it is fanned out in parts: the last endpoint id it was fanned out to (0: none yet). */
  fan_out_after: Generated<number>
  /** The W3C `traceparent` of the change that emitted it, when tracing was on: its spans link there. */
  trace_parent: string | null
}

export interface WebhookEndpointsTable {
  id: Generated<number>
  api_key_id: number
  url: string
  /** JSON array of subscriptions: event types, `order.*`-like families, or `*`. */
  events: string
  description: string | null
  /** `enabled` or `disabled`. */
  status: string
  /** Why the service disabled it (410, five days of failures); null when an operator or the owner did. */
  disabled_reason: string | null
  /** `whsec_…`: kept as is, since every delivery is signed with it. */
  secret: string
  /** Read no more since migration 0008 (`retired_secrets`). */
  previous_secret: string | null
  previous_secret_until: number | null
  /** JSON `[{secret, until}]`: the secrets replaced by rotations, each signing until its grace ends. */
  retired_secrets: Generated<string>
  /**
   * The last event that had committed when it was created or last re-enabled: it takes later ones only.
   * Event ids follow commit order, so this is exact where two instances' clocks would not be.
   */
  enabled_after_seq: number
  /** The first failure since its last success; five days of that disables it. */
  failing_since: number | null
  /** Failed attempts since its last success: from 5 on its circuit is open (one request at a time). */
  failures_in_row: Generated<number>
  /** The dispatcher that sends to it now (`host/pid/uuid`), while `lease_until` (database time) is ahead. */
  lease_owner: string | null
  lease_until: number | null
  created_at: number
  deleted_at: number | null
  /**
   * Set when it is deleted or disabled: the dispatchers end its pending attempts (webhooks/sweep.ts) and
   * let it go once this time has passed with none left (migration 0012).
   */
  sweep_until: number | null
}

/** One attempt of one delivery (an event to an endpoint); `pending` rows are the dispatchers' queue. */
export interface WebhookAttemptsTable {
  id: Generated<number>
  event_seq: number
  endpoint_id: number
  /** 1 to 8 within one series; a redelivery starts a new series at 1. */
  attempt: number
  /** `pending`, `succeeded` or `failed`. */
  status: string
  due_at: number
  /**
   * The dispatcher that took it into its endpoint's queue (its owner id): its outcome is written only
   * while this is still that dispatcher's. Cleared when given back.
   */
  lease_token: string | null
  /** Unused since migration 0008 (the endpoint's lease covers its attempts). */
  lease_until: number | null
  /** When it is due (pending) or was made. */
  at: number
  http_status: number | null
  error: string | null
  duration_ms: number | null
  /** 1 for the attempts of a redelivery (they do not count in the commit-to-first-attempt lag). */
  redelivery: Generated<number>
}

/**
 * PostgreSQL: events as their changes committed them, in no order, until a publisher numbers them into
 * `events` (events/events.publisher.ts). Always empty on SQLite, whose one writer numbers them at once.
 */
export interface EventOutboxTable {
  id: Generated<number>
  type: string
  api_key_id: number | null
  resource_version: number
  object: string
  created_at: number
  trace_parent: string | null
}

/** An endpoint's earlier subscription, in force for the events up to `until_seq` since the one before. */
export interface WebhookSubscriptionHistoryTable {
  /** The order rows were kept in: of two with one `until_seq`, the lower held first (migration 0011). */
  id: Generated<number>
  endpoint_id: number
  until_seq: number
  /** JSON array, as `webhook_endpoints.events`. */
  events: string
}

/** Always empty outside the readiness probe's transaction (db/write-health.ts). */
export interface StorageProbeTable {
  id: number
  filler: string
}

export interface Database {
  pets: PetsTable
  api_keys: ApiKeysTable
  idempotency_keys: IdempotencyKeysTable
  storage_probe: StorageProbeTable
  retired_key_secrets: RetiredKeySecretsTable
  key_usage: KeyUsageTable
  orders: OrdersTable
  pet_status_counts: PetStatusCountsTable
  events: EventsTable
  webhook_endpoints: WebhookEndpointsTable
  webhook_attempts: WebhookAttemptsTable
  webhook_subscription_history: WebhookSubscriptionHistoryTable
  event_outbox: EventOutboxTable
}

/** The database handle every repository function takes first (or a transaction of it). */
export type Db = Kysely<Database>
