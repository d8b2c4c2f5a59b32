import type { PetstoreClient } from '@petstore/client'
import { useState } from 'preact/hooks'
import { Time } from './format.js'
import { useLoad } from './load.js'
import { Problem } from './problem.js'

const PAGE = 20

/** The account's orders and their status, in the order they were placed. */
export function OrdersSection({ client }: { client: PetstoreClient }) {
  const [cursors, setCursors] = useState<string[]>([])
  const cursor = cursors.at(-1)
  const orders = useLoad(
    () => client.store.listOrders({ limit: PAGE, ...(cursor && { cursor }) }),
    cursor ?? '',
  )
  return (
    <section class="card" aria-labelledby="orders-title">
      <h2 id="orders-title">Orders</h2>
      <Problem error={orders.error} />
      {orders.data && orders.data.orders.length === 0 && (
        <p class="empty">
          No order yet: orders placed with this account's keys (POST /v1/store/orders) appear here.
        </p>
      )}
      {orders.data && orders.data.orders.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption>Orders, oldest first</caption>
            <thead>
              <tr>
                <th scope="col">Order</th>
                <th scope="col">Pet</th>
                <th scope="col">Status</th>
                <th scope="col">Placed</th>
              </tr>
            </thead>
            <tbody>
              {orders.data.orders.map((order) => (
                <tr key={order.id} data-order={order.id}>
                  <td>{order.id}</td>
                  <td>{order.petId}</td>
                  <td>
                    <span class={`badge ${order.status}`}>{order.status}</span>
                  </td>
                  <td>
                    <Time at={order.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav class="pager" aria-label="Order pages">
        <button
          type="button"
          disabled={cursors.length === 0}
          onClick={() => setCursors(cursors.slice(0, -1))}
        >
          Earlier page
        </button>
        <button
          type="button"
          disabled={!orders.data?.nextCursor}
          onClick={() => orders.data?.nextCursor && setCursors([...cursors, orders.data.nextCursor])}
        >
          Next page
        </button>
      </nav>
    </section>
  )
}
