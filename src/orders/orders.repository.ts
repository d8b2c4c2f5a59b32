import type { Selectable } from 'kysely'
import type { Db, OrdersTable } from '../db/database.js'
import type { Order, OrderStatus } from './orders.schemas.js'

type OrderRow = Selectable<OrdersTable>

export const toOrder = (row: OrderRow): Order => ({
  id: row.id,
  petId: row.pet_id,
  status: row.status as OrderStatus,
  createdAt: new Date(row.created_at).toISOString(),
})

/** The only code that writes SQL for orders; every function takes the transaction (or handle) it runs in. */
export const ordersRepository = {
  async findOrder(db: Db, apiKeyId: number, id: number): Promise<OrderRow | undefined> {
    return db
      .selectFrom('orders')
      .selectAll()
      .where('id', '=', id)
      .where('api_key_id', '=', apiKeyId)
      .executeTakeFirst()
  },

  /** The account's orders with an id above `afterId`, ascending. */
  async listOrders(
    db: Db,
    query: { apiKeyId: number; afterId: number; limit: number; status?: OrderStatus | undefined },
  ): Promise<Order[]> {
    let select = db
      .selectFrom('orders')
      .selectAll()
      .where('api_key_id', '=', query.apiKeyId)
      .where('id', '>', query.afterId)
    if (query.status !== undefined) select = select.where('status', '=', query.status)
    return (await select.orderBy('id').limit(query.limit).execute()).map(toOrder)
  },

  /**
   * Sets the pet `pending` if, and only if, it is available now: one statement, so of any number of
   * concurrent orders for one pet exactly one changes it (PostgreSQL re-checks the condition after the
   * row lock; SQLite has one writer).
   */
  async reservePet(db: Db, petId: number): Promise<boolean> {
    const result = await db
      .updateTable('pets')
      .set((eb) => ({ status: 'pending', version: eb('version', '+', 1) }))
      .where('id', '=', petId)
      .where('status', '=', 'available')
      .where('deleted_at', 'is', null)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  },

  async insertOrder(db: Db, apiKeyId: number, petId: number, at: number): Promise<Order> {
    const row = await db
      .insertInto('orders')
      .values({ api_key_id: apiKeyId, pet_id: petId, status: 'placed', created_at: at, updated_at: at })
      .returningAll()
      .executeTakeFirstOrThrow()
    return toOrder(row)
  },

  /** Moves the order from `from` to `to`; false when it was no longer at `from` (a concurrent change). */
  async moveOrder(db: Db, id: number, from: OrderStatus, to: OrderStatus, at: number): Promise<boolean> {
    const result = await db
      .updateTable('orders')
      .set({ status: to, updated_at: at })
      .where('id', '=', id)
      .where('status', '=', from)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  },

  async setPetStatus(db: Db, petId: number, status: 'available' | 'sold'): Promise<void> {
    await db
      .updateTable('pets')
      .set((eb) => ({ status, version: eb('version', '+', 1) }))
      .where('id', '=', petId)
      .execute()
  },

  /**
   * Whether an order holds the pet: `open` (placed or approved) before `delivered`; undefined when none
   * does. Asked inside the pet's own write transaction, after its row was written (and so locked).
   */
  async orderHoldOn(db: Db, petId: number): Promise<'open' | 'delivered' | undefined> {
    const rows = await db
      .selectFrom('orders')
      .select('status')
      .where('pet_id', '=', petId)
      .where('status', 'in', ['placed', 'approved', 'delivered'])
      .execute()
    if (rows.some((row) => row.status !== 'delivered')) return 'open'
    return rows.length > 0 ? 'delivered' : undefined
  },

  async petStatusOf(db: Db, petId: number): Promise<string | null | undefined> {
    const row = await db
      .selectFrom('pets')
      .select('status')
      .where('id', '=', petId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst()
    return row === undefined ? undefined : row.status
  },
}
