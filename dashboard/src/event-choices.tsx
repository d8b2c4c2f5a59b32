import type { WebhookEndpoint } from '@petstore/client'

type Subscription = WebhookEndpoint['events'][number]

/** What an endpoint may subscribe to (CONTRACT §14): everything, a family, or one type. */
export const SUBSCRIPTIONS = [
  '*',
  'pet.*',
  'order.*',
  'pet.created',
  'pet.updated',
  'pet.deleted',
  'order.placed',
  'order.approved',
  'order.delivered',
  'order.cancelled',
] as const satisfies readonly Subscription[]

const LABELS: Partial<Record<Subscription, string>> = {
  '*': 'every event (*)',
  'pet.*': 'every pet event (pet.*)',
  'order.*': 'every order event (order.*)',
}

interface Props {
  idPrefix: string
  chosen: readonly Subscription[]
  onChange: (chosen: Subscription[]) => void
  disabled: boolean
}

/** A group of checkboxes, one per subscription. */
export function EventChoices({ idPrefix, chosen, onChange, disabled }: Props) {
  const toggle = (name: Subscription, on: boolean) =>
    onChange(on ? [...chosen, name] : chosen.filter((candidate) => candidate !== name))
  return (
    <fieldset class="choices">
      <legend>Events to receive</legend>
      {SUBSCRIPTIONS.map((name) => (
        <label key={name} class="choice">
          <input
            type="checkbox"
            name={`${idPrefix}-events`}
            value={name}
            checked={chosen.includes(name)}
            disabled={disabled}
            onChange={(event) => toggle(name, event.currentTarget.checked)}
          />{' '}
          {LABELS[name] ?? name}
        </label>
      ))}
    </fieldset>
  )
}
