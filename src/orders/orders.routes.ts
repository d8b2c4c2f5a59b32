import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.js'
import { callerKeyOf } from '../http/guard.js'
import { publicUrlOf } from '../http/public-url.js'
import { idempotencyKeyOf } from '../idempotency/idempotency.js'
import { nextPageLink } from '../pagination/link.js'
import { CreatePetHeaders } from '../pets/pets.responses.js'
import { ref } from '../schema-ref.js'
import type { InventoryCounter } from './inventory.service.js'
import {
  getOrderResponses,
  inventoryResponses,
  listOrdersResponses,
  placeOrderResponses,
  updateOrderResponses,
} from './orders.responses.js'
import { ListOrdersQuery, NewOrder, OrderChange, OrderParams } from './orders.schemas.js'
import type { OrderService } from './orders.service.js'

const experimental = { tags: ['store'], 'x-stability': 'experimental' }

/** Store orders and the inventory (CONTRACT §11, experimental). */
export function registerOrderRoutes(
  app: FastifyInstance,
  deps: { orders: OrderService; inventory: InventoryCounter; config: Config },
): void {
  const { orders, inventory, config } = deps
  const api = app.withTypeProvider<TypeBoxTypeProvider>()

  api.post(
    '/store/orders',
    {
      schema: {
        operationId: 'placeOrder',
        summary: 'Order an animal (experimental)',
        description:
          'Orders an animal for the calling account; needs a `write` key. The animal must be `available` ' +
          'and becomes `pending` in the same transaction; a retry with the same `Idempotency-Key` gets the ' +
          'first order back.',
        ...experimental,
        headers: CreatePetHeaders,
        body: ref(NewOrder),
        response: placeOrderResponses,
      },
    },
    async (request, reply) => {
      const { order, replayed } = await orders.placeOrder({
        apiKeyId: callerKeyOf(request).id,
        petId: request.body.petId,
        idempotencyKey: idempotencyKeyOf(request.raw),
      })
      if (replayed) reply.header('idempotent-replayed', 'true')
      reply.header('location', `${publicUrlOf(config, request)}/store/orders/${order.id}`)
      return reply.code(201).send(order)
    },
  )

  api.get(
    '/store/orders',
    {
      schema: {
        operationId: 'listOrders',
        summary: "The calling account's orders (experimental)",
        description:
          "Returns up to `limit` of the calling account's orders in ascending id order, only those with " +
          '`status` when given; the next page is linked from the `Link: rel="next"` header.',
        ...experimental,
        querystring: ListOrdersQuery,
        response: listOrdersResponses,
      },
    },
    async (request, reply) => {
      const { limit = 20, status, cursor } = request.query
      const page = await orders.listOrders({ apiKeyId: callerKeyOf(request).id, limit, status, cursor })
      if (page.nextCursor) {
        const link = nextPageLink(
          publicUrlOf(config, request),
          '/store/orders',
          { limit, status },
          page.nextCursor,
        )
        reply.header('link', link)
      }
      return page.items
    },
  )

  api.get(
    '/store/orders/:orderId',
    {
      schema: {
        operationId: 'getOrder',
        summary: 'One order of the calling account (experimental)',
        description:
          "Returns one of the calling account's orders; another account's order is a 404, as if it did " +
          'not exist.',
        ...experimental,
        params: OrderParams,
        response: getOrderResponses,
      },
    },
    async (request) => orders.getOrder(callerKeyOf(request).id, request.params.orderId),
  )

  api.patch(
    '/store/orders/:orderId',
    {
      schema: {
        operationId: 'updateOrder',
        summary: 'Move an order on (experimental)',
        description:
          '`placed` → `approved` → `delivered` (the animal becomes `sold`); `placed` or `approved` → ' +
          '`cancelled` (the animal becomes `available` again). Needs a `write` key.',
        ...experimental,
        params: OrderParams,
        body: ref(OrderChange),
        response: updateOrderResponses,
      },
    },
    async (request) =>
      orders.changeOrder(callerKeyOf(request).id, request.params.orderId, request.body.status),
  )

  api.get(
    '/store/inventory',
    {
      schema: {
        operationId: 'getInventory',
        summary: 'Animals by status (experimental)',
        description:
          'Counts all the animals of the store (not only those the calling account ordered) by status; ' +
          'animals without a status are not counted.',
        ...experimental,
        response: inventoryResponses,
      },
    },
    async () => inventory.read(),
  )
}
