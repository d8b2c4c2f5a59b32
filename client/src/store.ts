import { nextCursor } from './link.js'
import type { Inventory, Order, OrderStatus } from './models.js'
import type { RequestOptions } from './options.js'
import type { Transport } from './transport.js'

/** One page of the account's orders. */
export interface OrderPage {
  orders: Order[]
  /** Pass it back as `cursor` for the next page; absent on the last page. */
  nextCursor?: string
}

export interface ListOrdersOptions extends RequestOptions {
  limit?: number
  status?: OrderStatus
  cursor?: string
}

export interface PlaceOrderOptions extends RequestOptions {
  /** Sent with every retry, so at most one order is placed; generated when not given. */
  idempotencyKey?: string
}

/** Store orders and the inventory (experimental operations of the service, CONTRACT §11). */
export interface StoreClient {
  /** Orders an available pet; it becomes `pending`. @example const order = await client.store.placeOrder(rex.id) */
  placeOrder(petId: number, options?: PlaceOrderOptions): Promise<Order>
  listOrders(options?: ListOrdersOptions): Promise<OrderPage>
  getOrder(id: number, options?: RequestOptions): Promise<Order>
  /** `approved`, `delivered` (the pet is sold) or `cancelled` (the pet is available again). */
  updateOrder(id: number, status: OrderStatus, options?: RequestOptions): Promise<Order>
  inventory(options?: RequestOptions): Promise<Inventory>
}

export function createStoreClient(transport: Transport): StoreClient {
  return {
    placeOrder: async (petId, options = {}) => {
      const { idempotencyKey = globalThis.crypto.randomUUID(), ...call } = options
      const headers = { 'idempotency-key': idempotencyKey }
      const response = await transport.send(
        { method: 'POST', path: '/store/orders', headers, body: { petId } },
        call,
      )
      return (await response.json()) as Order
    },
    listOrders: async (options = {}) => {
      const { limit, status, cursor, ...call } = options
      const params = new URLSearchParams()
      if (limit !== undefined) params.set('limit', String(limit))
      if (status !== undefined) params.set('status', status)
      if (cursor !== undefined) params.set('cursor', cursor)
      const search = params.toString()
      const path = search ? `/store/orders?${search}` : '/store/orders'
      const response = await transport.send({ method: 'GET', path }, call)
      const orders = (await response.json()) as Order[]
      const next = nextCursor(response.headers.get('link'))
      return next === undefined ? { orders } : { orders, nextCursor: next }
    },
    getOrder: async (id, options = {}) => {
      const response = await transport.send(
        { method: 'GET', path: `/store/orders/${encodeURIComponent(String(id))}` },
        options,
      )
      return (await response.json()) as Order
    },
    updateOrder: async (id, status, options = {}) => {
      const path = `/store/orders/${encodeURIComponent(String(id))}`
      const response = await transport.send({ method: 'PATCH', path, body: { status } }, options)
      return (await response.json()) as Order
    },
    inventory: async (options = {}) => {
      const response = await transport.send({ method: 'GET', path: '/store/inventory' }, options)
      return (await response.json()) as Inventory
    },
  }
}
