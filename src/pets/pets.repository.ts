import type { Selectable } from 'kysely'
import type { Db, PetsTable } from '../db/database.js'
import type { NewPet, Pet, PetStatus } from './pets.schemas.js'

type PetRow = Pick<Selectable<PetsTable>, 'id' | 'name' | 'category_id' | 'status'>

const PET_COLUMNS = ['id', 'name', 'category_id', 'status'] as const

/** The one place a stored row becomes a Pet: a null status is left out, as the spec's Pet has it optional. */
export function toPet(row: PetRow): Pet {
  const pet: Pet = { id: row.id, name: row.name, categoryId: row.category_id }
  if (row.status !== null) pet.status = row.status as PetStatus
  return pet
}

export async function insertPet(db: Db, pet: NewPet, createdAt: number): Promise<Pet> {
  const row = await db
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
}

export async function findPetById(db: Db, id: number): Promise<Pet | undefined> {
  const row = await db.selectFrom('pets').select(PET_COLUMNS).where('id', '=', id).executeTakeFirst()
  return row && toPet(row)
}

/** Keyset page: pets with an id above `afterId`, in ascending id order. */
export async function listPetsAfter(
  db: Db,
  page: { afterId: number; limit: number; status?: PetStatus | undefined },
): Promise<Pet[]> {
  let query = db.selectFrom('pets').select(PET_COLUMNS).where('id', '>', page.afterId)
  if (page.status !== undefined) query = query.where('status', '=', page.status)
  const rows = await query.orderBy('id').limit(page.limit).execute()
  return rows.map(toPet)
}
