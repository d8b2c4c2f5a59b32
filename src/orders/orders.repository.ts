import type { Selectable } from 'kysely'
import type { Db, OrdersTable } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import type { Order, OrderStatus } from './orders.schemas.js'

type OrderRow = Selectable<OrdersTable>

/** The one place a stored row becomes an Order. */
const toOrder = (row: OrderRow): Order => ({
  id: row.id,
  petId: row.pet_id,
  status: row.status as OrderStatus,
  createdAt: new Date(row.created_at).toISOString(),
})

export type OrderRepository = ReturnType<typeof createOrderRepository>

/**
 * The only code that writes SQL for orders (the pet's side of an order is the pets repository's). Reads
 * on the request path go through the handle's prepared reads; what runs inside a transaction takes it.
 */
export function createOrderRepository(handle: DbHandle) {
  const own = (db: Db, apiKeyId: number) =>
    db.selectFrom('orders').selectAll().where('api_key_id', '=', apiKeyId)
  const byId = handle.prepareRead((db, apiKeyId: number, id: number) =>
    own(db, apiKeyId).where('id', '=', id),
  )
  const page = handle.prepareRead((db, apiKeyId: number, afterId: number, limit: number) =>
    own(db, apiKeyId).where('id', '>', afterId).orderBy('id').limit(limit),
  )
  const pageByStatus = handle.prepareRead(
    (db, apiKeyId: number, afterId: number, status: string, limit: number) =>
      own(db, apiKeyId).where('id', '>', afterId).where('status', '=', status).orderBy('id').limit(limit),
  )

  return {
    /** The account's order; another account's is as absent as a missing one. */
    async findOrder(apiKeyId: number, id: number): Promise<Order | undefined> {
      const [row] = await byId(apiKeyId, id)
      return row && toOrder(row)
    },

    /** The same, read inside a transaction (a replay, a transition). */
    async findOrderIn(trx: Db, apiKeyId: number, id: number): Promise<Order | undefined> {
      const row = await own(trx, apiKeyId).where('id', '=', id).executeTakeFirst()
      return row && toOrder(row)
    },

    /** Keyset page of the account's orders with an id above `afterId`, ascending. */
    async listOrders(query: {
      apiKeyId: number
      afterId: number
      limit: number
      status?: OrderStatus | undefined
    }): Promise<Order[]> {
      const rows =
        query.status === undefined
          ? await page(query.apiKeyId, query.afterId, query.limit)
          : await pageByStatus(query.apiKeyId, query.afterId, query.status, query.limit)
      return rows.map(toOrder)
    },

    async insertOrder(trx: Db, apiKeyId: number, petId: number, at: number): Promise<Order> {
      const row = await trx
        .insertInto('orders')
        .values({ api_key_id: apiKeyId, pet_id: petId, status: 'placed', created_at: at, updated_at: at })
        .returningAll()
        .executeTakeFirstOrThrow()
      return toOrder(row)
    },

    /**
     * Moves the order from `from` to `to`: its new version, or undefined when it was no longer at `from`
     * (a concurrent change).
     */
    async moveOrder(
      trx: Db,
      id: number,
      from: OrderStatus,
      to: OrderStatus,
      at: number,
    ): Promise<number | undefined> {
      const row = await trx
        .updateTable('orders')
        .set((eb) => ({ status: to, updated_at: at, version: eb('version', '+', 1) }))
        .where('id', '=', id)
        .where('status', '=', from)
        .returning('version')
        .executeTakeFirst()
      return row?.version
    },

    /**
     * Whether an order holds the pet: `open` (placed or approved) before `delivered`; undefined when none
     * does. Asked inside the pet's own write transaction, after its row was written (and so locked).
     */
    async orderHoldOn(trx: Db, petId: number): Promise<'open' | 'delivered' | undefined> {
      const rows = await trx
        .selectFrom('orders')
        .select('status')
        .where('pet_id', '=', petId)
        .where('status', 'in', ['placed', 'approved', 'delivered'])
        .execute()
      if (rows.some((row) => row.status !== 'delivered')) return 'open'
      return rows.length > 0 ? 'delivered' : undefined
    },
  }
}
