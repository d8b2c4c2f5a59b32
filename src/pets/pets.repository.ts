import type { Selectable } from 'kysely'
import type { Db, PetsTable } from '../db/database.js'
import { precompiled } from '../db/precompiled.js'
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

const selectPetById = precompiled((db, id: number) =>
  db.selectFrom('pets').select(PET_COLUMNS).where('id', '=', id),
)

export async function findPetById(db: Db, id: number): Promise<Pet | undefined> {
  const [row] = await selectPetById(db, id)
  return row && toPet(row)
}

const selectPage = precompiled((db, afterId: number, limit: number) =>
  db.selectFrom('pets').select(PET_COLUMNS).where('id', '>', afterId).orderBy('id').limit(limit),
)

const selectPageByStatus = precompiled((db, afterId: number, status: string, limit: number) =>
  db
    .selectFrom('pets')
    .select(PET_COLUMNS)
    .where('id', '>', afterId)
    .where('status', '=', status)
    .orderBy('id')
    .limit(limit),
)

/** Keyset page: pets with an id above `afterId`, in ascending id order. */
export async function listPetsAfter(
  db: Db,
  page: { afterId: number; limit: number; status?: PetStatus | undefined },
): Promise<Pet[]> {
  const rows =
    page.status === undefined
      ? await selectPage(db, page.afterId, page.limit)
      : await selectPageByStatus(db, page.afterId, page.status, page.limit)
  return rows.map(toPet)
}
