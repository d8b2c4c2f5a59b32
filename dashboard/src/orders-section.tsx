import type { PetstoreClient } from '@petstore/client'
import { DataTable } from './data-table.js'
import { Time } from './format.js'
import { useLoad } from './load.js'
import { Pager, usePages } from './pager.js'
import { Problem } from './problem.js'

const PAGE = 20

/** The account's orders and their status, in the order they were placed. */
export function OrdersSection({ client }: { client: PetstoreClient }) {
  const pages = usePages()
  const cursor = pages.cursor
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
        <DataTable caption="Orders, oldest first" columns={['Order', 'Pet', 'Status', 'Placed']}>
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
        </DataTable>
      )}
      <Pager
        label="Order pages"
        pages={pages}
        next={orders.data?.nextCursor}
        labels={['Earlier page', 'Next page']}
      />
    </section>
  )
}
