import Type, { type Static } from 'typebox'
import { CursorQuery } from '../pagination/keyset.js'
import { MAX_SAFE_ID, ref } from '../schema-ref.js'

export const ORDER_STATUSES = ['placed', 'approved', 'delivered', 'cancelled'] as const

export const OrderStatus = Type.Enum([...ORDER_STATUSES], {
  $id: 'OrderStatus',
  type: 'string',
  description: '`placed` → `approved` → `delivered`; `placed` or `approved` → `cancelled`.',
})

const Id = Type.Integer({ minimum: 1, maximum: MAX_SAFE_ID, format: 'int64' })

export const NewOrder = Type.Object(
  { petId: { ...Id, description: 'The animal to buy: it must be `available`.' } },
  { $id: 'NewOrder', additionalProperties: false, description: 'Request body for placing an order.' },
)

export const Order = Type.Object(
  {
    id: { ...Id, description: 'Unique identifier assigned by the service.' },
    petId: { ...Id, description: 'The animal ordered.' },
    status: ref(OrderStatus),
    createdAt: Type.String({ format: 'date-time', description: 'When the order was placed.' }),
  },
  { $id: 'Order', additionalProperties: false, description: "A store order of the calling key's account." },
)

export const Orders = Type.Array(ref(Order), {
  $id: 'Orders',
  description: 'A page of orders in ascending id order.',
})

export const OrderChange = Type.Object(
  { status: ref(OrderStatus) },
  { $id: 'OrderChange', additionalProperties: false, description: 'The status the order moves to.' },
)

export const Inventory = Type.Object(
  {
    available: Type.Integer({ minimum: 0 }),
    pending: Type.Integer({ minimum: 0 }),
    sold: Type.Integer({ minimum: 0 }),
  },
  {
    $id: 'Inventory',
    additionalProperties: false,
    description: 'Animals by status, over all animals (those without a status are not counted).',
  },
)

export const ListOrdersQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Maximum number of orders.' }),
  ),
  status: Type.Optional(ref(OrderStatus)),
  cursor: CursorQuery,
})

export const OrderParams = Type.Object({ orderId: { ...Id, description: 'Identifier of the order.' } })

export type OrderStatus = Static<typeof OrderStatus>
export type Order = Static<typeof Order>
export type Inventory = Static<typeof Inventory>

export const orderSchemas = [OrderStatus, NewOrder, Order, Orders, OrderChange, Inventory]
