import { SUBSCRIPTIONS, type Subscription, subscriptionLabel } from './event-types.js'

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
          {subscriptionLabel(name)}
        </label>
      ))}
    </fieldset>
  )
}
