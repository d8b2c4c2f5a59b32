import type { Clock } from '../clock.js'
import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { AppError } from '../errors.js'
import type { EventRecorder, NewEvent } from '../events/events.publisher.js'
import { createIdempotency, replayedAnswer } from '../idempotency/idempotency.js'
import { afterIdOf, keysetPage, type Page } from '../pagination/keyset.js'
import { createPetRepository, type PetRecord } from '../pets/pets.repository.js'
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

/** The events of an order's change: the order's (its account's), and its pet's when the pet moved. */
function orderEvents(
  apiKeyId: number,
  order: Order,
  version: number,
  pet: PetRecord | undefined,
): NewEvent[] {
  const events: NewEvent[] = [
    { type: `order.${order.status}`, accountId: apiKeyId, resourceVersion: version, object: order },
  ]
  if (pet)
    events.push({ type: 'pet.updated', accountId: null, resourceVersion: pet.version, object: pet.pet })
  return events
}

/**
 * Store orders: each change of an order and of its pet commit together, in one transaction, with their
 * events (CONTRACT §14) written last.
 */
export function createOrderService(deps: { handle: DbHandle; clock: Clock; events: EventRecorder }) {
  const { handle, clock, events } = deps
  const repository = createOrderRepository(handle)
  const pets = createPetRepository(handle)
  const idempotency = createIdempotency(handle)

  /** Places an order; with an Idempotency-Key a retry returns the first order (`replayed`). */
  async function placeOrder(input: { apiKeyId: number; petId: number; idempotencyKey?: string | undefined }) {
    const now = clock.now()
    return handle.write(async (trx) => {
      const place = async () => {
        const pet = await pets.reservePet(trx, input.petId)
        if (!pet) throw await unavailable(trx, input.petId)
        const order = await repository.insertOrder(trx, input.apiKeyId, input.petId, now)
        return { order, pet }
      }
      const placed = async () => {
        const { order, pet } = await place()
        await events.record(trx, orderEvents(input.apiKeyId, order, 1, pet))
        return { order, replayed: false }
      }
      if (input.idempotencyKey === undefined) return placed()
      const request = {
        apiKeyId: input.apiKeyId,
        key: input.idempotencyKey,
        request: `order:${input.petId}`,
        now,
      }
      const madeOf = ({ order }: { order: Order }) => ({ orderId: order.id })
      const outcome = await idempotency.runOnce(trx, request, place, madeOf, ({ order }) => order)
      if ('performed' in outcome) {
        const { order, pet } = outcome.performed
        await events.record(trx, orderEvents(input.apiKeyId, order, 1, pet))
        return { order, replayed: false }
      }
      // The first response as it was sent; from before migration 0010, the order as it is now.
      return replayedAnswer(
        outcome.replayOf,
        (body) => ({ order: JSON.parse(body) as Order, replayed: true }),
        async (made) => {
          const order =
            'orderId' in made ? await repository.findOrderIn(trx, input.apiKeyId, made.orderId) : undefined
          return order && { order, replayed: true }
        },
      )
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
      const version = TRANSITIONS[from].includes(to)
        ? await repository.moveOrder(trx, id, from, to, now)
        : undefined
      if (version === undefined) {
        throw new AppError('invalid_transition', `order ${id} is ${from}: it cannot become ${to}`)
      }
      const petStatus = PET_AFTER[to]
      const pet = petStatus ? await pets.setPetStatus(trx, order.petId, petStatus) : undefined
      const moved = { ...order, status: to }
      await events.record(trx, orderEvents(apiKeyId, moved, version, pet))
      return moved
    })
  }

  return { placeOrder, getOrder, listOrders, changeOrder }
}
