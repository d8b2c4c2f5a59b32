import { createHash } from 'node:crypto'
import type { Clock } from '../clock.js'
import type { Db } from '../db/database.js'
import { createGroupCommit } from '../db/group-commit.js'
import { AppError } from '../errors.js'
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  findIdempotencyRecord,
  type IdempotencyClaim,
  type IdempotencyRecord,
  purgeIdempotencyKeys,
  reclaimIdempotencyKey,
} from '../idempotency/idempotency.repository.js'
import { decodeCursor, encodeCursor } from './pets.cursor.js'
import { GET_PET_SUNSET_AT } from './pets.deprecation.js'
import { normalisePetName } from './pets.name.js'
import { findPetById, insertPet, listPetsAfter } from './pets.repository.js'
import type { NewPet, Pet, PetStatus } from './pets.schemas.js'

/** Idempotency records are kept for 24 hours (contract §7). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000

export interface PetPage {
  pets: Pet[]
  /** Present when another page follows. */
  nextCursor?: string
}

export interface CreatePetInput {
  apiKeyId: number
  newPet: NewPet
  idempotencyKey?: string | undefined
}

export interface CreatedPet {
  pet: Pet
  /** True when an earlier request with the same Idempotency-Key created the pet. */
  replayed: boolean
}

export type PetService = ReturnType<typeof createPetService>

export function createPetService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps
  const insertGrouped = createGroupCommit(db, (trx, item: { pet: NewPet; createdAt: number }) =>
    insertPet(trx, item.pet, item.createdAt),
  )

  async function listPets(query: {
    limit: number
    status?: PetStatus | undefined
    cursor?: string | undefined
  }) {
    const afterId = query.cursor === undefined ? 0 : decodeCursor(query.cursor)
    // One row more than asked tells whether a next page exists without a count.
    const rows = await listPetsAfter(db, { afterId, status: query.status, limit: query.limit + 1 })
    const pets = rows.slice(0, query.limit)
    const last = pets.at(-1)
    const page: PetPage = { pets }
    if (rows.length > query.limit && last) page.nextCursor = encodeCursor(last.id)
    return page
  }

  async function createPet(input: CreatePetInput): Promise<CreatedPet> {
    const fields: NewPet = { ...input.newPet, name: normalisePetName(input.newPet.name) }
    if (input.idempotencyKey === undefined) {
      return { pet: await insertGrouped({ pet: fields, createdAt: clock.now() }), replayed: false }
    }
    const claim: IdempotencyClaim = {
      apiKeyId: input.apiKeyId,
      key: input.idempotencyKey,
      requestHash: hashRequest(input.newPet),
      createdAt: clock.now(),
    }
    // Claim, insert and completion commit together: a crash leaves neither a pet nor a stale marker.
    return db.transaction().execute(async (trx) => {
      if (!(await claimIdempotencyKey(trx, claim))) {
        const record = await findIdempotencyRecord(trx, claim.apiKeyId, claim.key)
        if (record && record.created_at > claim.createdAt - IDEMPOTENCY_TTL_MS)
          return replay(trx, record, claim)
        await reclaimIdempotencyKey(trx, claim)
      }
      const pet = await insertPet(trx, fields, claim.createdAt)
      await completeIdempotencyKey(trx, claim.apiKeyId, claim.key, pet.id)
      return { pet, replayed: false }
    })
  }

  async function replay(trx: Db, record: IdempotencyRecord, claim: IdempotencyClaim): Promise<CreatedPet> {
    if (record.request_hash !== claim.requestHash) {
      throw new AppError(
        'idempotency_key_reused',
        'this Idempotency-Key was used with a different body; use a new key',
      )
    }
    const pet = record.pet_id === null ? undefined : await findPetById(trx, record.pet_id)
    if (!pet) {
      throw new AppError(
        'idempotency_key_in_use',
        'a request with this Idempotency-Key is in flight; retry shortly',
      )
    }
    return { pet, replayed: true }
  }

  async function getPet(id: number): Promise<Pet> {
    if (clock.now() >= GET_PET_SUNSET_AT) {
      throw new AppError(
        'gone',
        'getPet was removed on 5 December 2030; use GET /pets with the status filter',
      )
    }
    const pet = await findPetById(db, id)
    if (!pet) throw new AppError('not_found', `pet ${id} does not exist`)
    return pet
  }

  return {
    listPets,
    createPet,
    getPet,
    purgeExpiredIdempotencyKeys: () => purgeIdempotencyKeys(db, clock.now() - IDEMPOTENCY_TTL_MS),
  }
}

/** The same body, whatever its key order or white space, hashes the same. */
function hashRequest(newPet: NewPet): string {
  const canonical = JSON.stringify([newPet.name, newPet.categoryId, newPet.status ?? null])
  return createHash('sha256').update(canonical).digest('base64url')
}
