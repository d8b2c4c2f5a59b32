import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.js'
import { AppError } from '../errors.js'
import {
  BODY_ERRORS,
  COMMON_ERRORS,
  documented,
  errorResponse,
  INSUFFICIENT_SCOPE,
} from '../http/error.schemas.js'
import { callerKeyOf } from '../http/guard.js'
import { countHeader, publicUrlOf } from '../http/public-url.js'
import { CreatePetHeaders } from '../pets/pets.responses.js'
import { ref } from '../schema-ref.js'
import type { InventoryCounter } from './inventory.service.js'
import {
  Inventory,
  ListOrdersQuery,
  NewOrder,
  Order,
  OrderChange,
  OrderParams,
  Orders,
} from './orders.schemas.js'
import type { OrderService } from './orders.service.js'

/** A 400 whose example carries one message of this operation. */
const invalid = (message: string) =>
  errorResponse({
    invalid_request: { when: 'a parameter or the body breaks the rules; the message names it', message },
  })
const NOT_FOUND = errorResponse({
  not_found: { when: 'the calling account has no order with this id', message: 'order 7 does not exist' },
})
const experimental = { tags: ['store'], 'x-stability': 'experimental' }

/** Store orders and the inventory (CONTRACT §11, experimental). */
export function registerOrderRoutes(
  app: FastifyInstance,
  deps: { orders: OrderService; inventory: InventoryCounter; config: Config },
): void {
  const { orders, inventory, config } = deps
  const api = app.withTypeProvider<TypeBoxTypeProvider>()

  api.post(
    '/v1/store/orders',
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
        response: {
          201: documented(ref(Order), 'The order, `placed`.', {
            'Idempotent-Replayed': {
              type: 'string',
              description: '`true` when an earlier request with this Idempotency-Key placed it.',
            },
          }),
          400: invalid('petId is required'),
          403: INSUFFICIENT_SCOPE,
          409: errorResponse({
            pet_unavailable: {
              when: 'the animal is not available (or does not exist)',
              message: 'pet 42 is pending: only an available pet can be ordered',
            },
            idempotency_key_in_use: {
              when: 'a request with this Idempotency-Key is still in flight',
              message: 'a request with this Idempotency-Key is in flight; retry shortly',
            },
          }),
          ...BODY_ERRORS,
          422: errorResponse({
            idempotency_key_reused: {
              when: 'the Idempotency-Key was used with another request',
              message: 'this Idempotency-Key was used with another request; use a new key',
            },
          }),
          ...COMMON_ERRORS,
        },
      },
    },
    async (request, reply) => {
      if (countHeader(request.raw.rawHeaders, 'idempotency-key') > 1) {
        throw new AppError('invalid_request', 'Idempotency-Key must be sent once')
      }
      const { order, replayed } = await orders.placeOrder({
        apiKeyId: callerKeyOf(request).id,
        petId: request.body.petId,
        idempotencyKey: request.headers['idempotency-key'],
      })
      if (replayed) reply.header('idempotent-replayed', 'true')
      return reply.code(201).send(order)
    },
  )

  api.get(
    '/v1/store/orders',
    {
      schema: {
        operationId: 'listOrders',
        summary: "The calling account's orders (experimental)",
        description:
          "Returns up to `limit` of the calling account's orders in ascending id order, only those with " +
          '`status` when given; the next page is linked from the `Link: rel="next"` header.',
        ...experimental,
        querystring: ListOrdersQuery,
        response: {
          200: documented(ref(Orders), 'A page of orders in ascending id order.', {
            Link: {
              type: 'string',
              description: 'RFC 8288 `<...>; rel="next"` to the next page; absent on the last.',
            },
          }),
          400: invalid('limit must be an integer from 1 to 100'),
          ...COMMON_ERRORS,
        },
      },
    },
    async (request, reply) => {
      const { limit = 20, status, cursor } = request.query
      const page = await orders.listOrders({ apiKeyId: callerKeyOf(request).id, limit, status, cursor })
      if (page.nextCursor) {
        const filter = status === undefined ? '' : `&status=${status}`
        const next = `${publicUrlOf(config, request)}/store/orders?limit=${limit}${filter}&cursor=${page.nextCursor}`
        reply.header('link', `<${next}>; rel="next"`)
      }
      return page.orders
    },
  )

  api.get(
    '/v1/store/orders/:orderId',
    {
      schema: {
        operationId: 'getOrder',
        summary: 'One order of the calling account (experimental)',
        description:
          "Returns one of the calling account's orders; another account's order is a 404, as if it did " +
          'not exist.',
        ...experimental,
        params: OrderParams,
        response: {
          200: documented(ref(Order), 'The order.'),
          400: invalid('orderId must be an integer from 1 to 9007199254740991'),
          404: NOT_FOUND,
          ...COMMON_ERRORS,
        },
      },
    },
    async (request) => orders.getOrder(callerKeyOf(request).id, request.params.orderId),
  )

  api.patch(
    '/v1/store/orders/:orderId',
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
        response: {
          200: documented(ref(Order), 'The order as changed.'),
          400: invalid('status must be one of placed, approved, delivered, cancelled'),
          403: INSUFFICIENT_SCOPE,
          404: NOT_FOUND,
          409: errorResponse({
            invalid_transition: {
              when: 'the order cannot move there from its status (named)',
              message: 'order 7 is delivered: it cannot become cancelled',
            },
          }),
          ...BODY_ERRORS,
          ...COMMON_ERRORS,
        },
      },
    },
    async (request) =>
      orders.changeOrder(callerKeyOf(request).id, request.params.orderId, request.body.status),
  )

  api.get(
    '/v1/store/inventory',
    {
      schema: {
        operationId: 'getInventory',
        summary: 'Animals by status (experimental)',
        description:
          'Counts all the animals of the store (not only those the calling account ordered) by status; ' +
          'animals without a status are not counted.',
        ...experimental,
        response: { 200: documented(ref(Inventory), 'Counts over all animals.'), ...COMMON_ERRORS },
      },
    },
    async () => inventory.read(),
  )
}
