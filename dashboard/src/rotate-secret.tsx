import type { PetstoreClient, WebhookEndpointWithSecret } from '@petstore/client'
import { useState } from 'preact/hooks'
import { useAction } from './load.js'
import { Problem, READ_ONLY_NOTE_ID } from './problem.js'
import { SecretNotice } from './secret-notice.js'

/** Graces offered for a rotation: how long the replaced secret keeps signing beside the new one. */
const GRACES = [
  { seconds: 0, label: 'none: the old secret stops at once (it leaked)' },
  { seconds: 3_600, label: '1 hour' },
  { seconds: 86_400, label: '24 hours (the default)' },
  { seconds: 7 * 86_400, label: '7 days' },
] as const

interface Props {
  client: PetstoreClient
  endpointId: string
  canWrite: boolean
}

/** `rotate_secret` with a chosen grace; the new secret is shown once. */
export function RotateSecret({ client, endpointId: id, canWrite }: Props) {
  const action = useAction()
  const [rotated, setRotated] = useState<WebhookEndpointWithSecret>()
  const [grace, setGrace] = useState(86_400)
  const disabled = !canWrite || action.busy
  return (
    <>
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
              .run(() => client.webhooks.rotateSecret(id, grace))
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
          <button
            type="submit"
            disabled={disabled}
            aria-describedby={canWrite ? undefined : READ_ONLY_NOTE_ID}
          >
            Rotate secret
          </button>
        </form>
        <Problem error={action.error} />
      </details>
    </>
  )
}
