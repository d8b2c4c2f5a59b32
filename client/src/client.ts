import { createDeprecationNotice } from './deprecation.js'
import { nextCursor } from './link.js'
import type {
  CreatePetBody,
  GetPetBody,
  ListPetsBody,
  ListPetsQuery,
  NewPet,
  Pet,
  PetPatch,
  PetStatus,
  RateLimitStatus,
  UsageDay,
} from './models.js'
import {
  type CreatePetOptions,
  type PetstoreClientOptions,
  type RequestOptions,
  resolveOptions,
} from './options.js'
import type { RateLimitState } from './rate-limit-state.js'
import { createStoreClient, type StoreClient } from './store.js'
import { Transport } from './transport.js'
import { createWebhooksClient, type WebhooksClient } from './webhooks.js'

/** One page of listPets. */
export interface PetPage {
  pets: Pet[]
  /** Pass it back as `cursor` for the next page; absent on the last page. */
  nextCursor?: string
}

export interface ListPetsOptions extends RequestOptions {
  /** Pets per page, 1 to 100; the service's default is 20. */
  limit?: number
  status?: PetStatus
  /** From `nextCursor` of the previous page. */
  cursor?: string
}

export interface AllPetsOptions extends RequestOptions {
  status?: PetStatus
  /** Pets per page while walking; default 100 (the most, so the fewest requests). */
  limit?: number
}

export interface UsageOptions extends RequestOptions {
  /** How many UTC days, today included: 1 to 90; the service's default is 30. */
  days?: number
}

export interface PetstoreClient {
  /**
   * One page of pets in ascending id order.
   *
   * @example
   * const first = await client.listPets({ limit: 50, status: 'available' })
   * if (first.nextCursor) await client.listPets({ limit: 50, status: 'available', cursor: first.nextCursor })
   */
  listPets(options?: ListPetsOptions): Promise<PetPage>
  /**
   * Adds a pet; retries never create a second one (see CreatePetOptions.idempotencyKey).
   *
   * @example const rex = await client.createPet({ name: 'Rex', categoryId: 1, status: 'available' })
   */
  createPet(newPet: NewPet, options?: CreatePetOptions): Promise<Pet>
  /**
   * One pet by id.
   *
   * @deprecated The service removes getPet on its Sunset date; use `getPets([id])` (listPets with `?id=`).
   * @example const rex = await client.getPet(1)
   */
  getPet(id: number, options?: RequestOptions): Promise<Pet>
  /**
   * The key's own standing: plan, scope, expiry, both windows and any ban. Not counted against the
   * limits, and answered even while the key is banned.
   *
   * @example const { limits } = await client.getRateLimit(); console.log(limits.day.remaining)
   */
  getRateLimit(options?: RequestOptions): Promise<RateLimitStatus>
  /**
   * Experimental: the account's requests per UTC day by status class, newest day first, every day of the
   * range present. Counted like any request; the service adds its counts every few seconds, so the last
   * ones may be missing.
   *
   * @example const [today] = await client.usage({ days: 7 }); console.log(today?.['429'])
   */
  usage(options?: UsageOptions): Promise<UsageDay[]>
  /**
   * Experimental: changes a pet. With `ifMatch` (the `ETag` of the pet as you read it) the service
   * refuses with 412 `precondition_failed` if it changed meanwhile.
   *
   * @example await client.updatePet(rex.id, { status: 'sold' })
   */
  updatePet(id: number, patch: PetPatch, options?: RequestOptions & { ifMatch?: string }): Promise<Pet>
  /** Experimental: removes a pet (409 `conflict` while an order for it is open). */
  deletePet(id: number, options?: RequestOptions): Promise<void>
  /** Experimental: those of `ids` (1 to 100) that exist, ascending; the replacement for getPet. */
  getPets(ids: readonly number[], options?: RequestOptions & { status?: PetStatus }): Promise<Pet[]>
  /** Experimental: store orders and the inventory. */
  store: StoreClient
  /** Experimental: webhook endpoints, their delivery log and the events (verify deliveries with `verifyWebhook`). */
  webhooks: WebhooksClient
  pets: {
    /**
     * Every pet, page after page: each page's `Link: rel="next"` gives the cursor of the next, which
     * is asked of this client's baseUrl (so the key never goes to another origin).
     *
     * @example for await (const pet of client.pets.all({ status: 'sold' })) console.log(pet.name)
     */
    all(options?: AllPetsOptions): AsyncIterable<Pet>
  }
  /**
   * The X-RateLimit-* values of the last response (empty before the first).
   *
   * @example if (client.rateLimit.remaining === 0) console.log('next window at', client.rateLimit.reset)
   */
  readonly rateLimit: Readonly<RateLimitState>
}

export const WALK_PAGE_SIZE = 100

function listPath(query: ListPetsQuery): string {
  const params = new URLSearchParams()
  if (query.limit !== undefined) params.set('limit', String(query.limit))
  if (query.status !== undefined) params.set('status', query.status)
  if (query.cursor !== undefined) params.set('cursor', query.cursor)
  const search = params.toString()
  return search ? `/pets?${search}` : '/pets'
}

interface Context {
  transport: Transport
  noticeDeprecation: ReturnType<typeof createDeprecationNotice>
}

async function listPets(context: Context, options: ListPetsOptions = {}): Promise<PetPage> {
  const { limit, status, cursor, ...call } = options
  const response = await context.transport.send(
    { method: 'GET', path: listPath({ limit, status, cursor }) },
    call,
  )
  // Bodies are taken as the OpenAPI document types them: the service serializes through the same schemas.
  const pets = (await response.json()) as ListPetsBody
  const next = nextCursor(response.headers.get('link'))
  return next === undefined ? { pets } : { pets, nextCursor: next }
}

async function createPet(context: Context, newPet: NewPet, options: CreatePetOptions = {}): Promise<Pet> {
  // Generated once per call and sent again by every retry: the service creates at most one pet.
  const { idempotencyKey = globalThis.crypto.randomUUID(), ...call } = options
  const headers = { 'idempotency-key': idempotencyKey }
  const response = await context.transport.send(
    { method: 'POST', path: '/pets', headers, body: newPet },
    call,
  )
  return (await response.json()) as CreatePetBody
}

async function getPet(context: Context, id: number, options: RequestOptions = {}): Promise<Pet> {
  const onResponse = (headers: Headers) =>
    context.noticeDeprecation('getPet', 'getPets([id]) (listPets with ?id=)', headers)
  const path = `/pets/${encodeURIComponent(String(id))}`
  const response = await context.transport.send({ method: 'GET', path, onResponse }, options)
  return (await response.json()) as GetPetBody
}

async function getRateLimit(context: Context, options: RequestOptions = {}): Promise<RateLimitStatus> {
  const response = await context.transport.send(
    { method: 'GET', path: '/rate_limit', ungated: true },
    options,
  )
  return (await response.json()) as RateLimitStatus
}

async function usage(context: Context, options: UsageOptions = {}): Promise<UsageDay[]> {
  const { days, ...call } = options
  const path = days === undefined ? '/usage' : `/usage?days=${encodeURIComponent(String(days))}`
  const response = await context.transport.send({ method: 'GET', path }, call)
  return (await response.json()) as UsageDay[]
}

async function* allPets(context: Context, options: AllPetsOptions = {}): AsyncGenerator<Pet> {
  const { status, limit = WALK_PAGE_SIZE, ...call } = options
  let cursor: string | undefined
  do {
    const page = await listPets(context, { status, limit, cursor, ...call })
    yield* page.pets
    cursor = page.nextCursor
  } while (cursor !== undefined)
}

/**
 * A client of the Pet Store API v1 with manners: it waits out 429s (Retry-After, then backoff), keeps
 * concurrent calls from walking into a ban, stops on a ban, retries network errors and 5xx only where
 * that is safe, and warns once about the deprecated getPet.
 *
 * @example
 * import { createPetstoreClient } from '@petstore/client'
 *
 * const client = createPetstoreClient({ baseUrl: 'http://127.0.0.1:8080/v1', apiKey: 'ps_live_...' })
 * const rex = await client.createPet({ name: 'Rex', categoryId: 1, status: 'available' })
 * for await (const pet of client.pets.all({ status: 'available' })) console.log(pet.id, pet.name)
 */
export function createPetstoreClient(options: PetstoreClientOptions): PetstoreClient {
  const resolved = resolveOptions(options)
  const transport = new Transport(resolved)
  const context: Context = { transport, noticeDeprecation: createDeprecationNotice(resolved.onWarning) }
  return {
    listPets: (options) => listPets(context, options),
    createPet: (newPet, options) => createPet(context, newPet, options),
    getPet: (id, options) => getPet(context, id, options),
    getRateLimit: (options) => getRateLimit(context, options),
    usage: (options) => usage(context, options),
    updatePet: async (id, patch, options = {}) => {
      const { ifMatch, ...call } = options
      const headers = ifMatch === undefined ? undefined : { 'if-match': ifMatch }
      const spec = {
        method: 'PATCH' as const,
        path: `/pets/${encodeURIComponent(String(id))}`,
        headers,
        body: patch,
      }
      return (await (await transport.send(spec, call)).json()) as Pet
    },
    deletePet: async (id, options) => {
      await transport.send(
        { method: 'DELETE', path: `/pets/${encodeURIComponent(String(id))}` },
        options ?? {},
      )
    },
    getPets: async (ids, options = {}) => {
      const { status, ...call } = options
      const filter = status === undefined ? '' : `&status=${status}`
      const response = await transport.send(
        { method: 'GET', path: `/pets?id=${ids.join(',')}${filter}` },
        call,
      )
      return (await response.json()) as Pet[]
    },
    store: createStoreClient(transport),
    webhooks: createWebhooksClient(transport),
    pets: { all: (options) => allPets(context, options) },
    get rateLimit() {
      return transport.rateLimit
    },
  }
}
