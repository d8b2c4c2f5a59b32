import type { Clock } from '../clock.js'
import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { AppError } from '../errors.js'
import { createIdempotency, keyInUse } from '../idempotency/idempotency.js'
import { afterIdOf, keysetPage, type Page } from '../pagination/keyset.js'
import { createPetRepository } from '../pets/pets.repository.js'
import { createOrderRepository } from './orders.repository.js'
import type { Order, OrderStatus } from './orders.schemas.js'

/** Where each status may go (CONTRACT §11), and what the pet becomes. */
const TRANSITIONS: Readonly<Record<OrderStatus, readonly OrderStatus[]>> = {
  placed: ['approved', 'cancelled'],
  approved: ['delivered', 'cancelled'],
  delivered: [],
  cancelled: [],
}
const PET_AFTER: Partial<Record<OrderStatus, 'available' | 'sold'>> = {
  delivered: 'sold',
  cancelled: 'available',
}

export type OrderPage = Page<Order>

export type OrderService = ReturnType<typeof createOrderService>

/** Store orders: each change of an order and of its pet commit together, in one transaction. */
export function createOrderService(deps: { handle: DbHandle; clock: Clock }) {
  const { handle, clock } = deps
  const repository = createOrderRepository(handle)
  const pets = createPetRepository(handle)
  const idempotency = createIdempotency(handle)

  /** Places an order; with an Idempotency-Key a retry returns the first order (`replayed`). */
  async function placeOrder(input: { apiKeyId: number; petId: number; idempotencyKey?: string | undefined }) {
    const now = clock.now()
    return handle.write(async (trx) => {
      const place = async () => {
        if (!(await pets.reservePet(trx, input.petId))) throw await unavailable(trx, input.petId)
        return repository.insertOrder(trx, input.apiKeyId, input.petId, now)
      }
      if (input.idempotencyKey === undefined) return { order: await place(), replayed: false }
      const request = {
        apiKeyId: input.apiKeyId,
        key: input.idempotencyKey,
        request: `order:${input.petId}`,
        now,
      }
      const outcome = await idempotency.runOnce(trx, request, place, (order) => ({ orderId: order.id }))
      if ('performed' in outcome) return { order: outcome.performed, replayed: false }
      const made = outcome.replayOf
      const first =
        'orderId' in made ? await repository.findOrderIn(trx, input.apiKeyId, made.orderId) : undefined
      if (!first) throw keyInUse()
      return { order: first, replayed: true }
    })
  }

  async function unavailable(trx: Db, petId: number) {
    const status = await pets.petStatusIn(trx, petId)
    const why = status === undefined ? 'does not exist' : `is ${status ?? 'without a status'}`
    return new AppError('pet_unavailable', `pet ${petId} ${why}: only an available pet can be ordered`)
  }

  async function getOrder(apiKeyId: number, id: number): Promise<Order> {
    const order = await repository.findOrder(apiKeyId, id)
    // Another account's order is a 404 like a missing one: its existence is not told.
    if (!order) throw new AppError('not_found', `order ${id} does not exist`)
    return order
  }

  async function listOrders(query: {
    apiKeyId: number
    limit: number
    status?: OrderStatus
    cursor?: string
  }) {
    const afterId = afterIdOf(query.cursor)
    const rows = await repository.listOrders({ ...query, afterId, limit: query.limit + 1 })
    return keysetPage(rows, query.limit)
  }

  /** Moves the order to `to`, and its pet with it, or 409 `invalid_transition` naming where it is. */
  async function changeOrder(apiKeyId: number, id: number, to: OrderStatus): Promise<Order> {
    const now = clock.now()
    return handle.write(async (trx) => {
      const order = await repository.findOrderIn(trx, apiKeyId, id)
      if (!order) throw new AppError('not_found', `order ${id} does not exist`)
      const from = order.status
      if (!TRANSITIONS[from].includes(to) || !(await repository.moveOrder(trx, id, from, to, now))) {
        throw new AppError('invalid_transition', `order ${id} is ${from}: it cannot become ${to}`)
      }
      const petStatus = PET_AFTER[to]
      if (petStatus) await pets.setPetStatus(trx, order.petId, petStatus)
      return { ...order, status: to }
    })
  }

  return { placeOrder, getOrder, listOrders, changeOrder }
}
