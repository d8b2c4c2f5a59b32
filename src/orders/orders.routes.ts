import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.js'
import { AppError } from '../errors.js'
import { COMMON_ERRORS, documented, errorResponse, INSUFFICIENT_SCOPE } from '../http/error.schemas.js'
import { callerKeyOf } from '../http/guard.js'
import { countHeader, publicUrlOf } from '../http/public-url.js'
import { CreatePetHeaders } from '../pets/pets.responses.js'
import { ref } from '../schema-ref.js'
import type { InventoryCounter } from './inventory.js'
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

const INVALID = errorResponse(
  '`invalid_request`: a parameter or the body breaks the rules; the message names it',
)
const NOT_FOUND = errorResponse('`not_found`: the calling account has no order with this id')
const experimental = { tags: ['store'], 'x-stability': 'experimental' }
const writes = { ...experimental, security: [{ bearerAuth: ['write'] }] }

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
        description: 'The animal must be `available`; it becomes `pending` in the same transaction.',
        ...writes,
        headers: CreatePetHeaders,
        body: ref(NewOrder),
        response: {
          201: documented(ref(Order), 'The order, `placed`.', {
            'Idempotent-Replayed': {
              type: 'string',
              description: '`true` when an earlier request with this Idempotency-Key placed it.',
            },
          }),
          400: INVALID,
          403: INSUFFICIENT_SCOPE,
          409: errorResponse(
            '`pet_unavailable`: the animal is not available (or does not exist); `idempotency_key_in_use`',
          ),
          415: errorResponse('`unsupported_media_type`: the body is not application/json'),
          422: errorResponse('`idempotency_key_reused`: the Idempotency-Key was used with another request'),
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
        ...experimental,
        querystring: ListOrdersQuery,
        response: {
          200: documented(ref(Orders), 'A page of orders in ascending id order.', {
            Link: {
              type: 'string',
              description: 'RFC 8288 `<...>; rel="next"` to the next page; absent on the last.',
            },
          }),
          400: INVALID,
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
        ...experimental,
        params: OrderParams,
        response: {
          200: documented(ref(Order), 'The order.'),
          400: INVALID,
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
          '`cancelled` (the animal becomes `available` again).',
        ...writes,
        params: OrderParams,
        body: ref(OrderChange),
        response: {
          200: documented(ref(Order), 'The order as changed.'),
          400: INVALID,
          403: INSUFFICIENT_SCOPE,
          404: NOT_FOUND,
          409: errorResponse('`invalid_transition`: the order cannot move there from its status (named)'),
          415: errorResponse('`unsupported_media_type`: the body is not JSON'),
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
        ...experimental,
        response: { 200: documented(ref(Inventory), 'Counts over all animals.'), ...COMMON_ERRORS },
      },
    },
    async () => inventory.read(),
  )
}
