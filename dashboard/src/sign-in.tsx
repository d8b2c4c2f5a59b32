import type { RateLimitStatus } from '@petstore/client'
import { useEffect, useState } from 'preact/hooks'
import { useAction } from './load.js'
import { Problem } from './problem.js'
import { clientFor, forgetKey, storeKey } from './session.js'

interface Props {
  /** The key this tab kept from before a reload, tried once at start. */
  remembered: string | null
  /** Why the last session ended, when the service refused its key. */
  refused?: string | undefined
  onSignedIn: (apiKey: string, standing: RateLimitStatus) => void
}

/** Paste a key; it is checked with `GET /v1/rate_limit` (not counted) before the tab keeps it. */
export function SignIn({ remembered, refused, onSignedIn }: Props) {
  const [apiKey, setApiKey] = useState('')
  const action = useAction()

  const signIn = async (candidate: string) => {
    const standing = await action.run(() => clientFor(candidate).getRateLimit())
    if (standing) {
      storeKey(candidate)
      onSignedIn(candidate, standing)
    } else forgetKey()
  }

  // Tried once, when the page opens.
  useEffect(() => {
    if (remembered) void signIn(remembered)
  }, [])

  return (
    <section class="card sign-in" aria-labelledby="sign-in-title">
      <h2 id="sign-in-title">Sign in with your API key</h2>
      {refused && !action.error && <Problem error={refused} />}
      <form
        onSubmit={(event) => {
          event.preventDefault()
          if (apiKey.trim()) void signIn(apiKey.trim())
        }}
      >
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="text"
          class="masked"
          autocomplete="off"
          spellcheck={false}
          placeholder="ps_live_… or ps_test_…"
          required
          value={apiKey}
          onInput={(event) => setApiKey(event.currentTarget.value)}
        />
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
      <Problem error={action.error} />
      <p class="note">
        The key is kept in this browser tab only (sessionStorage) and sent only to this service's API. No key
        yet? The store's operators issue them.
      </p>
    </section>
  )
}
