import { PetstoreError } from '@petstore/client'

/** An error from the API as the partner needs it: its message, and the request id to quote. */
export function Problem({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null
  const known = error instanceof PetstoreError
  const message = error instanceof Error ? error.message : String(error)
  return (
    <div class="problem" role="alert">
      <p>{message}</p>
      {known && error.requestId && (
        <p class="request-id">
          Request id <code>{error.requestId}</code> (quote it to the store's operators)
        </p>
      )}
    </div>
  )
}

/** Why a control is disabled for a `read` key; the controls point at it with `aria-describedby`. */
export const READ_ONLY_NOTE_ID = 'read-only-note'

export function ReadOnlyNote() {
  return (
    <p id={READ_ONLY_NOTE_ID} class="note">
      This key has <strong>read</strong> scope: it sees everything here and changes nothing. The controls that
      would change something are disabled; a <code>write</code> key enables them.
    </p>
  )
}
