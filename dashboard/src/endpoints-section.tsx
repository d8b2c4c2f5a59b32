import type { PetstoreClient, WebhookEndpoint, WebhookEndpointWithSecret } from '@petstore/client'
import { useState } from 'preact/hooks'
import { EndpointCard } from './endpoint-card.js'
import { EventChoices } from './event-choices.js'
import { useAction, useLoad } from './load.js'
import { Problem, READ_ONLY_NOTE_ID } from './problem.js'
import { SecretNotice } from './secret-notice.js'

interface Props {
  client: PetstoreClient
  canWrite: boolean
}

/** The account's webhook endpoints (at most 10, so one page holds them), and a form to add one. */
export function EndpointsSection({ client, canWrite }: Props) {
  const endpoints = useLoad(() => client.webhooks.listEndpoints({ limit: 100 }), 'endpoints')
  const [created, setCreated] = useState<WebhookEndpointWithSecret>()
  const items = endpoints.data?.items
  return (
    <section class="card" aria-labelledby="endpoints-title">
      <h2 id="endpoints-title">Webhook endpoints</h2>
      <Problem error={endpoints.error} />
      {created && (
        <SecretNotice
          title={`Endpoint ${created.id} added`}
          secret={created.secret}
          onDone={() => setCreated(undefined)}
        />
      )}
      {items && items.length === 0 && (
        <p class="empty">
          No endpoint yet. Add one below with the HTTPS address that should receive signed events; then send
          it a test event.
        </p>
      )}
      {items?.map((endpoint: WebhookEndpoint) => (
        <EndpointCard
          key={endpoint.id}
          client={client}
          endpoint={endpoint}
          canWrite={canWrite}
          onChanged={endpoints.reload}
        />
      ))}
      <AddEndpoint
        client={client}
        canWrite={canWrite}
        onAdded={(endpoint) => {
          setCreated(endpoint)
          endpoints.reload()
        }}
      />
    </section>
  )
}

function AddEndpoint(props: {
  client: PetstoreClient
  canWrite: boolean
  onAdded: (endpoint: WebhookEndpointWithSecret) => void
}) {
  const [url, setUrl] = useState('')
  const [description, setDescription] = useState('')
  const [events, setEvents] = useState<WebhookEndpoint['events']>(['*'])
  const action = useAction()
  const disabled = !props.canWrite || action.busy
  const submit = async () => {
    const endpoint = await action.run(() =>
      props.client.webhooks.createEndpoint({ url, events, ...(description && { description }) }),
    )
    if (!endpoint) return
    setUrl('')
    setDescription('')
    setEvents(['*'])
    props.onAdded(endpoint)
  }
  return (
    <form
      class="add-endpoint"
      aria-labelledby="add-endpoint-title"
      onSubmit={(event) => {
        event.preventDefault()
        void submit()
      }}
    >
      <h3 id="add-endpoint-title">Add an endpoint</h3>
      <label for="new-endpoint-url">URL</label>
      <input
        id="new-endpoint-url"
        type="url"
        required
        placeholder="https://hooks.example.com/petstore"
        value={url}
        onInput={(event) => setUrl(event.currentTarget.value)}
        disabled={disabled}
        aria-describedby={props.canWrite ? undefined : READ_ONLY_NOTE_ID}
      />
      <label for="new-endpoint-description">Description (optional)</label>
      <input
        id="new-endpoint-description"
        type="text"
        maxLength={200}
        value={description}
        onInput={(event) => setDescription(event.currentTarget.value)}
        disabled={disabled}
      />
      <EventChoices idPrefix="new-endpoint" chosen={events} onChange={setEvents} disabled={disabled} />
      <button
        type="submit"
        disabled={disabled || events.length === 0}
        aria-describedby={props.canWrite ? undefined : READ_ONLY_NOTE_ID}
      >
        {action.busy ? 'Adding…' : 'Add endpoint'}
      </button>
      <Problem error={action.error} />
    </form>
  )
}
