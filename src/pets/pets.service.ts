import type { Clock } from '../clock.js'
import type { Db } from '../db/database.js'
import { createFreshCache } from '../db/fresh-cache.js'
import { createGroupCommit } from '../db/group-commit.js'
import type { DbHandle } from '../db/handle.js'
import { AppError } from '../errors.js'
import type { EventRecorder, NewEvent } from '../events/events.publisher.js'
import { createIdempotency, replayedAnswer } from '../idempotency/idempotency.js'
import { afterIdOf, keysetPage, type Page } from '../pagination/keyset.js'
import { currentTraceParent } from '../tracing/tracing.js'
import { GET_PET_SUNSET_AT } from './pets.deprecation.js'
import { normalisePetName } from './pets.name.js'
import { createPetRepository, type PetChanges, type PetRecord } from './pets.repository.js'
import type { NewPet, Pet, PetStatus } from './pets.schemas.js'

export type PetPage = Page<Pet>

export interface PageQuery {
  limit: number
  status?: PetStatus | undefined
  /** As sent by the client: checked here, never trusted. */
  cursor?: string | undefined
}

export interface CreatePetInput {
  apiKeyId: number
  newPet: NewPet
  idempotencyKey?: string | undefined
}

export interface CreatedPet {
  pet: Pet
  /** The pet's version now (1 for a new pet; a replayed one may have changed since): its ETag. */
  version: number
  /** True when an earlier request with the same Idempotency-Key created the pet. */
  replayed: boolean
}

export type PetService = ReturnType<typeof createPetService>

/**
 * What orders say of a pet (`open`: placed or approved; `delivered`), asked inside the pet's write
 * transaction once its row is written and locked. Orders build on pets, so deps.ts injects this.
 */
export type OrderHold = (trx: Db, petId: number) => Promise<'open' | 'delivered' | undefined>

/** Pages kept while fresh: every combination of limit and status for the first pages, and then some. */
export const PAGE_CACHE_ENTRIES = 1_000
/** Single pets kept while fresh, for getPet. */
export const PET_CACHE_ENTRIES = 10_000

export function createPetService(deps: {
  handle: DbHandle
  clock: Clock
  orderHold: OrderHold
  events: EventRecorder
}) {
  const { handle, clock, orderHold, events } = deps
  const repository = createPetRepository(handle)
  const idempotency = createIdempotency(handle)
  const pages = createFreshCache<PetPage>('pet page', handle.changeToken, PAGE_CACHE_ENTRIES)
  const byId = createFreshCache<PetRecord | undefined>('pet', handle.changeToken, PET_CACHE_ENTRIES)
  const insertGrouped = createGroupCommit(
    handle,
    async (trx, items: { pet: NewPet; createdAt: number; traceParent: string | null }[]) => {
      const pets = await repository.insertPets(trx, items)
      // Each event keeps its own request's trace context, not that of the request that flushed the batch.
      await events.record(
        trx,
        pets.map((pet, index) => ({ ...created(pet), traceParent: items[index]?.traceParent })),
      )
      return pets
    },
  )

  /** A page of pets; the same query gives the same (frozen) page object while nothing was written. */
  async function listPets(query: PageQuery): Promise<PetPage> {
    // The cursor is judged before the cache is asked: an input gets one verdict whatever is cached.
    const afterId = afterIdOf(query.cursor)
    const cacheKey = `${query.limit}|${query.status ?? ''}|${afterId}`
    return pages.get(cacheKey, async () => {
      const rows = await repository.listPetsAfter({ afterId, status: query.status, limit: query.limit + 1 })
      return Object.freeze(keysetPage(rows, query.limit))
    })
  }

  async function createPet(input: CreatePetInput): Promise<CreatedPet> {
    const fields: NewPet = { ...input.newPet, name: normalisePetName(input.newPet.name) }
    const now = clock.now()
    if (input.idempotencyKey === undefined) {
      const pet = await insertGrouped({ pet: fields, createdAt: now, traceParent: currentTraceParent() })
      return { pet, version: 1, replayed: false }
    }
    const request = {
      apiKeyId: input.apiKeyId,
      key: input.idempotencyKey,
      request: canonicalRequest(input.newPet),
      now,
    }
    const outcome = await handle.write(async (trx) => {
      const perform = () => repository.insertPet(trx, fields, now)
      const madeOf = (pet: Pet) => ({ petId: pet.id })
      const outcome = await idempotency.runOnce(trx, request, perform, madeOf, (pet) => pet)
      if ('performed' in outcome) await events.record(trx, [created(outcome.performed)])
      return outcome
    })
    if ('performed' in outcome) return { pet: outcome.performed, version: 1, replayed: false }
    // The first response as it was sent (version 1); from before migration 0010, the pet as it is now,
    // read after this transaction.
    return replayedAnswer(
      outcome.replayOf,
      (body) => ({ pet: JSON.parse(body) as Pet, version: 1, replayed: true }),
      async (made) => {
        const record = 'petId' in made ? await repository.findPetById(made.petId) : undefined
        return record && { ...record, replayed: true }
      },
    )
  }

  /** The pet and its version (for the ETag). */
  async function getPet(id: number): Promise<PetRecord> {
    if (clock.now() >= GET_PET_SUNSET_AT) {
      throw new AppError('gone', 'getPet was removed on 5 December 2030; use GET /pets?id=<petId>')
    }
    const record = await byId.get(String(id), () => repository.findPetById(id))
    if (!record) throw notFound(id)
    return record
  }

  /**
   * Changes the pet (createPet's rules for each field). With `ifMatch` (the versions an If-Match header
   * named) only while the pet is still at one of them: 412 otherwise, and nothing changes. Its status is
   * the order's to move while one is open, and stays `sold` once one was delivered (CONTRACT §11: a pet is
   * sold at most once): a change of status then is 409 `conflict`. A patch that leaves every field as it
   * is changes nothing: the version (the ETag) stays, and no event is emitted (§14: `pet.updated` is a change).
   */
  async function patchPet(id: number, changes: PetChanges, ifMatch?: readonly number[]): Promise<PetRecord> {
    const fields = changes.name === undefined ? changes : { ...changes, name: normalisePetName(changes.name) }
    return handle.write(async (trx) => {
      // The row first, with its lock on PostgreSQL: an order placed meanwhile either committed before (and
      // is seen below: the change rolls back) or waits and finds the new status.
      const current = await repository.lockPet(trx, id)
      if (!current) throw notFound(id)
      if (ifMatch && !ifMatch.includes(current.version)) {
        throw new AppError(
          'precondition_failed',
          `pet ${id} changed since the ETag in If-Match: fetch it again`,
        )
      }
      if (fields.status !== undefined) refuseStatusChange(id, await orderHold(trx, id))
      if (!changesAnything(current.pet, fields)) return current
      const record = await repository.updatePet(trx, id, fields)
      if (!record) throw notFound(id)
      await events.record(trx, [petEvent('pet.updated', record)])
      return record
    })
  }

  /** Removes the pet, unless an order for it is open (placed or approved): 409 `conflict` then. */
  async function deletePet(id: number): Promise<void> {
    const deleted = await handle.write(async (trx) => {
      // The pet's row first, for its lock (see patchPet).
      const last = await repository.deletePet(trx, id, clock.now())
      if (!last) return false
      if ((await orderHold(trx, id)) === 'open') {
        throw new AppError('conflict', `pet ${id} has an open order: deliver or cancel it first`)
      }
      await events.record(trx, [petEvent('pet.deleted', last)])
      return true
    })
    if (!deleted) throw notFound(id)
  }

  return {
    listPets,
    createPet,
    getPet,
    patchPet,
    deletePet,
    /** GET /pets?id=...: those that exist, ascending. */
    listPetsByIds: (ids: readonly number[], status?: PetStatus) => repository.listPetsByIds(ids, status),
    purgeExpiredIdempotencyKeys: () => idempotency.purgeExpired(clock.now()),
  }
}

/** A pet's event (CONTRACT §14): every account sees it. */
const petEvent = (type: NewEvent['type'], record: PetRecord): NewEvent => ({
  type,
  accountId: null,
  resourceVersion: record.version,
  object: record.pet,
})

const created = (pet: Pet): NewEvent => petEvent('pet.created', { pet, version: 1 })

/** Whether applying `fields` would leave the pet other than it is (an absent status is `null` in a patch). */
const changesAnything = (pet: Pet, fields: PetChanges): boolean =>
  (fields.name !== undefined && fields.name !== pet.name) ||
  (fields.categoryId !== undefined && fields.categoryId !== pet.categoryId) ||
  (fields.status !== undefined && fields.status !== (pet.status ?? null))

const notFound = (id: number) => new AppError('not_found', `pet ${id} does not exist`)

function refuseStatusChange(id: number, hold: 'open' | 'delivered' | undefined): void {
  if (hold === 'open') {
    throw new AppError(
      'conflict',
      `pet ${id} has an open order: only the order changes its status (deliver or cancel it first)`,
    )
  }
  if (hold === 'delivered') {
    throw new AppError('conflict', `pet ${id} was sold by an order: its status can no longer change`)
  }
}

/** The same body, whatever its key order or white space, is the same request. */
function canonicalRequest(newPet: NewPet): string {
  return JSON.stringify([newPet.name, newPet.categoryId, newPet.status ?? null])
}
