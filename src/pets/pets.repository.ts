import { type Selectable, type SelectQueryBuilder, sql } from 'kysely'
import type { Database, Db, PetsTable } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { batchByTurn } from '../db/turn-batch.js'
import type { NewPet, Pet, PetStatus } from './pets.schemas.js'

type PetRow = Pick<Selectable<PetsTable>, 'id' | 'name' | 'category_id' | 'status' | 'version'>

const PET_COLUMNS = ['id', 'name', 'category_id', 'status', 'version'] as const
/** Rows per INSERT statement: 4 parameters each, far below SQLite's and PostgreSQL's limits. */
const INSERT_CHUNK_ROWS = 1_000

/** A pet and its version: the version changes whenever the pet does (it makes the ETag). */
export interface PetRecord {
  pet: Pet
  version: number
}

/** The one place a stored row becomes a Pet: a null status is left out, as the spec's Pet has it optional. */
function toPet(row: PetRow): Pet {
  const pet: Pet = { id: row.id, name: row.name, categoryId: row.category_id }
  if (row.status !== null) pet.status = row.status as PetStatus
  return pet
}

const toRecord = (row: PetRow): PetRecord => ({ pet: toPet(row), version: row.version })

export interface PetPageQuery {
  afterId: number
  limit: number
  status?: PetStatus | undefined
}

/** What a PATCH changes: a field left undefined stays; `status: null` removes the status. */
export interface PetChanges {
  name?: string
  categoryId?: number
  status?: PetStatus | null
}

export type PetRepository = ReturnType<typeof createPetRepository>

type LivePets = (db: Db) => SelectQueryBuilder<Database, 'pets', PetRow>

/**
 * The pet with an id, by one prepared read on SQLite (synchronous, cheap). On PostgreSQL every lookup
 * of a turn of the event loop shares one `id = any($1)` query (db/turn-batch.ts): a round trip per turn
 * instead of one per request.
 */
function recordsById(handle: DbHandle, live: LivePets): (id: number) => Promise<PetRecord | undefined> {
  if (handle.dialect === 'sqlite') {
    const byId = handle.prepareRead((db, id: number) => live(db).where('id', '=', id))
    return async (id) => {
      const [row] = await byId(id)
      return row && toRecord(row)
    }
  }
  const byIds = handle.prepareRead((db, ids: number[]) => live(db).where('id', '=', sql<number>`any(${ids})`))
  return batchByTurn(
    async (ids: number[]) => new Map((await byIds(ids)).map((row) => [row.id, toRecord(row)])),
  )
}

/**
 * The only code that writes SQL for pets. Reads go through the handle's prepared reads (committed data,
 * SQL compiled once) and never return a deleted pet; writes take the transaction they write in.
 */
export function createPetRepository(handle: DbHandle) {
  const live = (db: Db) => db.selectFrom('pets').select(PET_COLUMNS).where('deleted_at', 'is', null)
  const findRecord = recordsById(handle, live)
  const page = handle.prepareRead((db, afterId: number, limit: number) =>
    live(db).where('id', '>', afterId).orderBy('id').limit(limit),
  )
  const pageByStatus = handle.prepareRead((db, afterId: number, status: string, limit: number) =>
    live(db).where('id', '>', afterId).where('status', '=', status).orderBy('id').limit(limit),
  )

  /**
   * The pets in one multi-row statement per thousand (a group commit's), returned in the order given:
   * their ids are drawn in that order, so the rows sorted by id line up with it.
   */
  async function insertPets(trx: Db, items: readonly { pet: NewPet; createdAt: number }[]): Promise<Pet[]> {
    const inserted: Pet[] = []
    for (let start = 0; start < items.length; start += INSERT_CHUNK_ROWS) {
      const rows = await trx
        .insertInto('pets')
        .values(
          items.slice(start, start + INSERT_CHUNK_ROWS).map(({ pet, createdAt }) => ({
            name: pet.name,
            category_id: pet.categoryId,
            status: pet.status ?? null,
            created_at: createdAt,
          })),
        )
        .returning(PET_COLUMNS)
        .execute()
      inserted.push(...rows.sort((a, b) => a.id - b.id).map(toPet))
    }
    return inserted
  }

  return {
    findPetById: findRecord,

    /** Keyset page: pets with an id above `afterId`, in ascending id order. */
    async listPetsAfter(query: PetPageQuery): Promise<Pet[]> {
      const rows =
        query.status === undefined
          ? await page(query.afterId, query.limit)
          : await pageByStatus(query.afterId, query.status, query.limit)
      return rows.map(toPet)
    },

    /** Those of `ids` that exist (and have `status`, when given), with their versions, ascending id. */
    async listPetsByIds(ids: readonly number[], status?: PetStatus): Promise<PetRecord[]> {
      let query = live(handle.db).where('id', 'in', [...ids])
      if (status !== undefined) query = query.where('status', '=', status)
      return (await query.orderBy('id').execute()).map(toRecord)
    },

    async insertPet(trx: Db, pet: NewPet, createdAt: number): Promise<Pet> {
      const [inserted] = await insertPets(trx, [{ pet, createdAt }])
      if (!inserted) throw new Error('the insert returned no row')
      return inserted
    },

    insertPets,

    /**
     * The live pet in the write's transaction, with its row lock on PostgreSQL (SQLite has one writer), so
     * that what a change is judged against stays as read until it commits. Undefined when none.
     */
    async lockPet(trx: Db, id: number): Promise<PetRecord | undefined> {
      const query = live(trx).where('id', '=', id)
      const row = await (handle.dialect === 'postgres' ? query.forUpdate() : query).executeTakeFirst()
      return row && toRecord(row)
    },

    /** Applies `changes` to the live pet and moves its version. Undefined when no such live pet exists. */
    async updatePet(trx: Db, id: number, changes: PetChanges): Promise<PetRecord | undefined> {
      const row = await trx
        .updateTable('pets')
        .set((eb) => ({
          ...(changes.name !== undefined && { name: changes.name }),
          ...(changes.categoryId !== undefined && { category_id: changes.categoryId }),
          ...(changes.status !== undefined && { status: changes.status }),
          version: eb('version', '+', 1),
        }))
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .returning(PET_COLUMNS)
        .executeTakeFirst()
      return row && toRecord(row)
    },

    /** Marks the pet deleted: its last state (at its new version), or undefined when no such live pet exists. */
    async deletePet(trx: Db, id: number, at: number): Promise<PetRecord | undefined> {
      const row = await trx
        .updateTable('pets')
        .set((eb) => ({ deleted_at: at, version: eb('version', '+', 1) }))
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .returning(PET_COLUMNS)
        .executeTakeFirst()
      return row && toRecord(row)
    },

    /**
     * Sets the pet `pending` if, and only if, it is available now (an order reserves it): one statement,
     * so of any number of concurrent reservations exactly one changes it (PostgreSQL re-checks the
     * condition after the row lock; SQLite has one writer). The pet as reserved, or undefined.
     */
    async reservePet(trx: Db, id: number): Promise<PetRecord | undefined> {
      const row = await trx
        .updateTable('pets')
        .set((eb) => ({ status: 'pending', version: eb('version', '+', 1) }))
        .where('id', '=', id)
        .where('status', '=', 'available')
        .where('deleted_at', 'is', null)
        .returning(PET_COLUMNS)
        .executeTakeFirst()
      return row && toRecord(row)
    },

    /** Moves the pet an order delivered or cancelled (`sold`, `available`); the pet as it is then. */
    async setPetStatus(trx: Db, id: number, status: 'available' | 'sold'): Promise<PetRecord | undefined> {
      const row = await trx
        .updateTable('pets')
        .set((eb) => ({ status, version: eb('version', '+', 1) }))
        .where('id', '=', id)
        .returning(PET_COLUMNS)
        .executeTakeFirst()
      return row && toRecord(row)
    },

    /** The live pet's status inside a transaction: null without one, undefined when there is no such pet. */
    async petStatusIn(trx: Db, id: number): Promise<PetStatus | null | undefined> {
      const row = await live(trx).where('id', '=', id).executeTakeFirst()
      return row && (row.status as PetStatus | null)
    },
  }
}
