export {
  type AllPetsOptions,
  createPetstoreClient,
  type ListPetsOptions,
  type PetPage,
  type PetstoreClient,
} from './client.js'
export type { PetstoreWarning } from './deprecation.js'
export { PetstoreError, type PetstoreErrorCode } from './errors.js'
export type {
  Inventory,
  NewPet,
  Order,
  OrderStatus,
  Pet,
  PetPatch,
  PetStatus,
  RateLimitStatus,
  ServiceErrorCode,
} from './models.js'
export type {
  CreatePetOptions,
  PetstoreClientOptions,
  RequestOptions,
  RetryNotice,
} from './options.js'
export type { RateLimitState } from './rate-limit-state.js'
export type { ListOrdersOptions, OrderPage, PlaceOrderOptions, StoreClient } from './store.js'
