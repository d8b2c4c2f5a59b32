import type { PetstoreClient } from '@petstore/client'
import { useState } from 'preact/hooks'
import { EVENT_TYPES, type EventType } from './event-types.js'
import { Time } from './format.js'
import { useLoad } from './load.js'
import { Pager, usePages } from './pager.js'
import { Problem } from './problem.js'

const PAGE = 20

/**
 * The events the account sees from the last 30 days, newest first (`order=desc`), each with its JSON
 * exactly as a delivery carries it.
 */
export function EventsSection({ client }: { client: PetstoreClient }) {
  const [type, setType] = useState<EventType | ''>('')
  const pages = usePages()
  const cursor = pages.cursor
  const events = useLoad(
    () =>
      client.webhooks.listEvents({
        order: 'desc',
        limit: PAGE,
        ...(type && { type }),
        ...(cursor && { cursor }),
      }),
    `${type}|${cursor ?? ''}`,
  )
  return (
    <section class="card" aria-labelledby="events-title">
      <h2 id="events-title">Events</h2>
      <div class="controls">
        <label for="event-type">Type</label>
        <select
          id="event-type"
          value={type}
          onChange={(event) => {
            setType(event.currentTarget.value as EventType | '')
            pages.reset()
          }}
        >
          <option value="">every type</option>
          {EVENT_TYPES.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
        <button type="button" onClick={events.reload}>
          Refresh
        </button>
      </div>
      <Problem error={events.error} />
      {events.data && events.data.items.length === 0 && (
        <p class="empty">
          No {type || ''} event in the last 30 days. Events appear when pets or your orders change, or when
          you send a test event to an endpoint.
        </p>
      )}
      <ul class="events">
        {events.data?.items.map((event) => (
          <li key={event.id} data-event={event.id}>
            <details>
              <summary>
                <code>{event.id}</code> <span class="event-type">{event.type}</span>{' '}
                <Time at={event.createdAt} />
              </summary>
              <pre>{JSON.stringify(event, null, 2)}</pre>
            </details>
          </li>
        ))}
      </ul>
      <Pager label="Event pages" pages={pages} next={events.data?.nextCursor} labels={['Newer', 'Older']} />
    </section>
  )
}
