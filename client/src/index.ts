export {
  type AllPetsOptions,
  createPetstoreClient,
  type ListPetsOptions,
  type PetPage,
  type PetstoreClient,
  type UsageOptions,
} from './client.js'
export type { PetstoreWarning } from './deprecation.js'
export { PetstoreError, type PetstoreErrorCode } from './errors.js'
export type {
  DeliveryAttempt,
  Inventory,
  NewPet,
  NewWebhookEndpoint,
  Order,
  OrderStatus,
  Pet,
  PetPatch,
  PetStatus,
  PetstoreEvent,
  RateLimitStatus,
  ServiceErrorCode,
  UsageDay,
  WebhookEndpoint,
  WebhookEndpointPatch,
  WebhookEndpointWithSecret,
} from './models.js'
export type {
  CreatePetOptions,
  PetstoreClientOptions,
  RequestOptions,
  RetryNotice,
} from './options.js'
export { parseRetryAfter, type RateLimitState } from './rate-limit-state.js'
export type { ListOrdersOptions, OrderPage, PlaceOrderOptions, StoreClient } from './store.js'
export type { Page, PageOptions, WebhooksClient } from './webhooks.js'
