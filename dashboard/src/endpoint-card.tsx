import type { PetstoreClient, WebhookEndpoint } from '@petstore/client'
import { useState } from 'preact/hooks'
import { DeliveryLog } from './delivery-log.js'
import { EndpointEditor } from './endpoint-editor.js'
import { Time } from './format.js'
import { useAction } from './load.js'
import { Problem, READ_ONLY_NOTE_ID } from './problem.js'
import { RotateSecret } from './rotate-secret.js'

interface Props {
  client: PetstoreClient
  endpoint: WebhookEndpoint
  canWrite: boolean
  onChanged: () => void
}

/** One endpoint: what it is, every change §14 allows, a test event, and its delivery log. */
export function EndpointCard({ client, endpoint, canWrite, onChanged }: Props) {
  const action = useAction()
  const [testSent, setTestSent] = useState<string>()
  const [logRound, setLogRound] = useState(0)
  const webhooks = client.webhooks
  const id = endpoint.id
  const enabled = endpoint.status === 'enabled'
  const disabled = !canWrite || action.busy
  const describedBy = canWrite ? undefined : READ_ONLY_NOTE_ID
  const change = async (work: () => Promise<unknown>) => {
    if ((await action.run(work)) !== undefined) onChanged()
  }
  const sendTest = async () => {
    const eventId = await action.run(() => webhooks.sendTestEvent(id))
    if (eventId === undefined) return
    setTestSent(eventId)
    setLogRound((value) => value + 1)
  }
  const remove = () => {
    if (window.confirm(`Delete endpoint ${id} (${endpoint.url})? Nothing more is sent to it.`))
      void change(async () => {
        await webhooks.deleteEndpoint(id)
        return true
      })
  }
  return (
    <article class="endpoint" aria-labelledby={`${id}-title`} data-endpoint={id}>
      <h3 id={`${id}-title`}>
        <code>{endpoint.url}</code> <span class={`badge ${endpoint.status}`}>{endpoint.status}</span>
      </h3>
      <dl class="facts">
        <dt>Id</dt>
        <dd>
          <code>{id}</code>
        </dd>
        <dt>Events</dt>
        <dd>{endpoint.events.join(', ')}</dd>
        <dt>Description</dt>
        <dd>{endpoint.description ?? '(none)'}</dd>
        <dt>Added</dt>
        <dd>
          <Time at={endpoint.createdAt} />
        </dd>
        {endpoint.disabledReason && (
          <>
            <dt>Disabled because</dt>
            <dd>{endpoint.disabledReason}</dd>
          </>
        )}
      </dl>
      <div class="buttons">
        <button
          type="button"
          disabled={disabled || !enabled}
          aria-describedby={describedBy}
          onClick={() => void sendTest()}
        >
          Send test event
        </button>
        <button
          type="button"
          disabled={disabled}
          aria-describedby={describedBy}
          onClick={() =>
            void change(() => webhooks.updateEndpoint(id, { status: enabled ? 'disabled' : 'enabled' }))
          }
        >
          {enabled ? 'Disable' : 'Enable'}
        </button>
        <button
          type="button"
          class="danger"
          disabled={disabled}
          aria-describedby={describedBy}
          onClick={remove}
        >
          Delete
        </button>
      </div>
      {testSent && (
        <p role="status">
          Test event <code>{testSent}</code> queued: its attempts appear in the log below.
        </p>
      )}
      <Problem error={action.error} />
      <RotateSecret client={client} endpointId={id} canWrite={canWrite} />
      <details>
        <summary>Change events or description</summary>
        <EndpointEditor client={client} endpoint={endpoint} canWrite={canWrite} onChanged={onChanged} />
      </details>
      <DeliveryLog client={client} endpointId={id} canWrite={canWrite} round={logRound} />
    </article>
  )
}
