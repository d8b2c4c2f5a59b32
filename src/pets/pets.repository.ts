import type { Selectable } from 'kysely'
import type { Db, PetsTable } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import type { NewPet, Pet, PetStatus } from './pets.schemas.js'

type PetRow = Pick<Selectable<PetsTable>, 'id' | 'name' | 'category_id' | 'status'>

const PET_COLUMNS = ['id', 'name', 'category_id', 'status'] as const

/** The one place a stored row becomes a Pet: a null status is left out, as the spec's Pet has it optional. */
function toPet(row: PetRow): Pet {
  const pet: Pet = { id: row.id, name: row.name, categoryId: row.category_id }
  if (row.status !== null) pet.status = row.status as PetStatus
  return pet
}

export interface PetPageQuery {
  afterId: number
  limit: number
  status?: PetStatus | undefined
}

export type PetRepository = ReturnType<typeof createPetRepository>

/**
 * The only code that writes SQL for pets. Reads go through the handle's prepared reads (committed data,
 * SQL compiled once); `insertPet` takes the transaction it writes in.
 */
export function createPetRepository(handle: DbHandle) {
  const byId = handle.prepareRead((db, id: number) =>
    db.selectFrom('pets').select(PET_COLUMNS).where('id', '=', id),
  )
  const page = handle.prepareRead((db, afterId: number, limit: number) =>
    db.selectFrom('pets').select(PET_COLUMNS).where('id', '>', afterId).orderBy('id').limit(limit),
  )
  const pageByStatus = handle.prepareRead((db, afterId: number, status: string, limit: number) =>
    db
      .selectFrom('pets')
      .select(PET_COLUMNS)
      .where('id', '>', afterId)
      .where('status', '=', status)
      .orderBy('id')
      .limit(limit),
  )

  return {
    async findPetById(id: number): Promise<Pet | undefined> {
      const [row] = await byId(id)
      return row && toPet(row)
    },

    /** Keyset page: pets with an id above `afterId`, in ascending id order. */
    async listPetsAfter(query: PetPageQuery): Promise<Pet[]> {
      const rows =
        query.status === undefined
          ? await page(query.afterId, query.limit)
          : await pageByStatus(query.afterId, query.status, query.limit)
      return rows.map(toPet)
    },

    async insertPet(trx: Db, pet: NewPet, createdAt: number): Promise<Pet> {
      const row = await trx
        .insertInto('pets')
        .values({
          name: pet.name,
          category_id: pet.categoryId,
          status: pet.status ?? null,
          created_at: createdAt,
        })
        .returning(PET_COLUMNS)
        .executeTakeFirstOrThrow()
      return toPet(row)
    },
  }
}
