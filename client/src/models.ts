import type { components, operations } from './openapi.js'

/** An animal as the service returns it. `status` is absent when the pet was created without one. */
export type Pet = components['schemas']['Pet']

/** What createPet sends: `name` and `categoryId` are required, `status` is optional. */
export type NewPet = components['schemas']['NewPet']

/** `available`, `pending` or `sold`. */
export type PetStatus = components['schemas']['PetStatus']

/** The body of every error response of the service. */
export type ErrorBody = components['schemas']['Error']

/** The error codes the service documents in its OpenAPI document. */
export type ServiceErrorCode = ErrorBody['code']

/** Query parameters of listPets. */
export type ListPetsQuery = NonNullable<operations['listPets']['parameters']['query']>

/** The JSON bodies of the successful responses, as the OpenAPI document types them. */
export type ListPetsBody = operations['listPets']['responses'][200]['content']['application/json']
export type CreatePetBody = operations['createPet']['responses'][201]['content']['application/json']
export type GetPetBody = operations['getPet']['responses'][200]['content']['application/json']

/** The caller's standing: plan, scope, expiry, both rate-limit windows and any ban (GET /rate_limit). */
export type RateLimitStatus = components['schemas']['RateLimitStatus']

/** Experimental: one UTC day of the account's requests by status class (`2xx`, `4xx`, `429`, `5xx`). */
export type UsageDay = components['schemas']['UsageDay']

/** Experimental (CONTRACT §11): a JSON merge patch of a pet; `status: null` removes the status. */
export type PetPatch = components['schemas']['PetPatch']

/** Experimental: a store order of the calling key's account. */
export type Order = components['schemas']['Order']

/** `placed`, `approved`, `delivered` or `cancelled`. */
export type OrderStatus = components['schemas']['OrderStatus']

/** Experimental: animals by status over the whole store. */
export type Inventory = components['schemas']['Inventory']

/** Experimental (CONTRACT §14): a webhook endpoint, never its secret. */
export type WebhookEndpoint = components['schemas']['WebhookEndpoint']

/** The endpoint with its signing secret: the answer of a creation or a rotation, once. */
export type WebhookEndpointWithSecret = components['schemas']['WebhookEndpointWithSecret']

export type NewWebhookEndpoint = components['schemas']['NewWebhookEndpoint']
export type WebhookEndpointPatch = components['schemas']['WebhookEndpointPatch']

/** One attempt to deliver an event to an endpoint. */
export type DeliveryAttempt = components['schemas']['DeliveryAttempt']

/** A change of a pet or an order, as delivered and listed; drop one whose `resourceVersion` you have passed. */
export type PetstoreEvent = components['schemas']['Event']
