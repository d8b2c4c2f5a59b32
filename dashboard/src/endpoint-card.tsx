import type { PetstoreClient, WebhookEndpoint, WebhookEndpointWithSecret } from '@petstore/client'
import { useState } from 'preact/hooks'
import { DeliveryLog } from './delivery-log.js'
import { EndpointEditor } from './endpoint-editor.js'
import { Time } from './format.js'
import { useAction } from './load.js'
import { Problem, READ_ONLY_NOTE_ID } from './problem.js'
import { SecretNotice } from './secret-notice.js'

interface Props {
  client: PetstoreClient
  endpoint: WebhookEndpoint
  canWrite: boolean
  onChanged: () => void
}

/** Graces offered for a rotation: how long the replaced secret keeps signing beside the new one. */
const GRACES = [
  { seconds: 0, label: 'none: the old secret stops at once (it leaked)' },
  { seconds: 3_600, label: '1 hour' },
  { seconds: 86_400, label: '24 hours (the default)' },
  { seconds: 7 * 86_400, label: '7 days' },
] as const

/** One endpoint: what it is, every change §14 allows, a test event, and its delivery log. */
export function EndpointCard({ client, endpoint, canWrite, onChanged }: Props) {
  const action = useAction()
  const [rotated, setRotated] = useState<WebhookEndpointWithSecret>()
  const [grace, setGrace] = useState(86_400)
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
      {rotated && (
        <SecretNotice
          title={`New secret for ${id}`}
          secret={rotated.secret}
          onDone={() => setRotated(undefined)}
        />
      )}
      <details>
        <summary>Rotate the signing secret</summary>
        <form
          onSubmit={(event) => {
            event.preventDefault()
            void action
              .run(() => webhooks.rotateSecret(id, grace))
              .then((result) => result && setRotated(result))
          }}
        >
          <label for={`${id}-grace`}>The old secret keeps signing for</label>
          <select
            id={`${id}-grace`}
            value={grace}
            disabled={disabled}
            onChange={(event) => setGrace(Number(event.currentTarget.value))}
          >
            {GRACES.map((choice) => (
              <option key={choice.seconds} value={choice.seconds}>
                {choice.label}
              </option>
            ))}
          </select>
          <button type="submit" disabled={disabled} aria-describedby={describedBy}>
            Rotate secret
          </button>
        </form>
      </details>
      <details>
        <summary>Change events or description</summary>
        <EndpointEditor client={client} endpoint={endpoint} canWrite={canWrite} onChanged={onChanged} />
      </details>
      <DeliveryLog client={client} endpointId={id} canWrite={canWrite} round={logRound} />
    </article>
  )
}
