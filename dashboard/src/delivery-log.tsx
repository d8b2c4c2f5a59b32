import type { DeliveryAttempt, PetstoreClient } from '@petstore/client'
import { useEffect, useState } from 'preact/hooks'
import { DataTable } from './data-table.js'
import { formatNumber, Time } from './format.js'
import { useAction, useLoad } from './load.js'
import { Pager, usePages } from './pager.js'
import { Problem, READ_ONLY_NOTE_ID } from './problem.js'
import { SuccessStrip } from './success-strip.js'

/** The delivery log's columns; the last holds each attempt's Redeliver button. */
const ATTEMPT_COLUMNS = [
  'At',
  'Event',
  'Attempt',
  'Status',
  'HTTP',
  'Duration',
  'Error',
  <span class="visually-hidden" key="action">
    Action
  </span>,
]

type Status = DeliveryAttempt['status']
const PAGE = 20
/**
 * While the first page shows an attempt still pending it is asked again this often, so outcomes appear by
 * themselves; a log with nothing pending is asked again only on request (each ask counts against the key).
 */
const REFRESH_MS = 5_000

interface Props {
  client: PetstoreClient
  endpointId: string
  canWrite: boolean
  /** Grows when something was sent to the endpoint: the log is asked again at once. */
  round: number
}

/** An endpoint's attempts, newest first, filtered by status, a page at a time; redelivery of an event. */
export function DeliveryLog({ client, endpointId, canWrite, round }: Props) {
  const [status, setStatus] = useState<Status | ''>('')
  const pages = usePages()
  const cursor = pages.cursor
  const [pending, setPending] = useState(false)
  const page = useLoad(
    async () => {
      const loaded = await client.webhooks.listDeliveries(endpointId, {
        limit: PAGE,
        ...(status && { status }),
        ...(cursor && { cursor }),
      })
      setPending(!cursor && loaded.items.some((attempt) => attempt.status === 'pending'))
      return loaded
    },
    `${endpointId}|${status}|${cursor ?? ''}|${round}`,
    pending ? REFRESH_MS : undefined,
  )
  // The strip shows the latest attempts of every status: the first page without a filter, kept while the
  // partner filters or pages.
  const [latest, setLatest] = useState<DeliveryAttempt[]>()
  useEffect(() => {
    if (page.data && !status && !cursor) setLatest(page.data.items)
  }, [page.data, status, cursor])
  const redeliver = useAction()
  const [redelivered, setRedelivered] = useState<string>()
  const filterId = `${endpointId}-status`
  return (
    <section class="deliveries" aria-labelledby={`${endpointId}-log-title`}>
      <h4 id={`${endpointId}-log-title`}>Delivery log</h4>
      {latest && <SuccessStrip attempts={latest} />}
      <div class="controls">
        <label for={filterId}>Show</label>
        <select
          id={filterId}
          value={status}
          onChange={(event) => {
            setStatus(event.currentTarget.value as Status | '')
            pages.reset()
          }}
        >
          <option value="">every attempt</option>
          <option value="pending">pending</option>
          <option value="succeeded">succeeded</option>
          <option value="failed">failed</option>
        </select>
        <button type="button" onClick={page.reload}>
          Refresh
        </button>
      </div>
      <Problem error={page.error ?? redeliver.error} />
      {redelivered && <p role="status">Event {redelivered} queued for redelivery.</p>}
      {page.data && page.data.items.length === 0 && (
        <p class="empty">
          No attempt {status ? `with status ${status} ` : ''}yet. Send a test event to see one here.
        </p>
      )}
      {page.data && page.data.items.length > 0 && (
        <DataTable caption="Attempts, newest first" columns={ATTEMPT_COLUMNS}>
          {page.data.items.map((attempt) => (
            <tr key={`${attempt.eventId}|${attempt.attempt}|${attempt.at}`} data-event={attempt.eventId}>
              <td>
                <Time at={attempt.at} />
              </td>
              <td>
                <code>{attempt.eventId}</code>
              </td>
              <td>{attempt.attempt}</td>
              <td>
                <span class={`badge ${attempt.status}`}>{attempt.status}</span>
              </td>
              <td>{attempt.httpStatus ?? '–'}</td>
              <td>{attempt.durationMs === null ? '–' : `${formatNumber(attempt.durationMs)} ms`}</td>
              <td>{attempt.error ?? ''}</td>
              <td>
                <button
                  type="button"
                  disabled={!canWrite || redeliver.busy}
                  aria-describedby={canWrite ? undefined : READ_ONLY_NOTE_ID}
                  aria-label={`Redeliver ${attempt.eventId}`}
                  onClick={() =>
                    void redeliver
                      .run(() => client.webhooks.redeliver(attempt.eventId, endpointId))
                      .then((sent) => {
                        if (!sent) return
                        setRedelivered(attempt.eventId)
                        page.reload()
                      })
                  }
                >
                  Redeliver
                </button>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <Pager
        label="Delivery log pages"
        pages={pages}
        next={page.data?.nextCursor}
        labels={['Newer', 'Older']}
      />
    </section>
  )
}
