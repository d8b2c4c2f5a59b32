import type { PetstoreClient, WebhookEndpoint } from '@petstore/client'
import { useState } from 'preact/hooks'
import { EventChoices } from './event-choices.js'
import { useAction } from './load.js'
import { Problem, READ_ONLY_NOTE_ID } from './problem.js'

interface Props {
  client: PetstoreClient
  endpoint: WebhookEndpoint
  canWrite: boolean
  onChanged: () => void
}

/** PATCH of an endpoint's subscriptions and description. */
export function EndpointEditor({ client, endpoint, canWrite, onChanged }: Props) {
  const [events, setEvents] = useState(endpoint.events)
  const [description, setDescription] = useState(endpoint.description ?? '')
  const action = useAction()
  const disabled = !canWrite || action.busy
  const save = async () => {
    const saved = await action.run(() =>
      client.webhooks.updateEndpoint(endpoint.id, { events, description: description || null }),
    )
    if (saved) onChanged()
  }
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault()
        void save()
      }}
    >
      <EventChoices idPrefix={endpoint.id} chosen={events} onChange={setEvents} disabled={disabled} />
      <label for={`${endpoint.id}-description`}>Description</label>
      <input
        id={`${endpoint.id}-description`}
        type="text"
        maxLength={200}
        value={description}
        disabled={disabled}
        onInput={(event) => setDescription(event.currentTarget.value)}
      />
      <button
        type="submit"
        disabled={disabled || events.length === 0}
        aria-describedby={canWrite ? undefined : READ_ONLY_NOTE_ID}
      >
        Save changes
      </button>
      <Problem error={action.error} />
    </form>
  )
}
