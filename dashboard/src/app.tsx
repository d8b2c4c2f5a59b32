import type { PetstoreClient, RateLimitStatus } from '@petstore/client'
import { useState } from 'preact/hooks'
import { EndpointsSection } from './endpoints-section.js'
import { EventsSection } from './events-section.js'
import { KeySection } from './key-section.js'
import { OrdersSection } from './orders-section.js'
import { ReadOnlyNote } from './problem.js'
import { clientFor, forgetKey, storedKey } from './session.js'
import { SignIn } from './sign-in.js'
import { UsageSection } from './usage-section.js'

interface Session {
  client: PetstoreClient
  standing: RateLimitStatus
}

/** Signed out: the sign-in form. Signed in: every section for the key's account, and "Sign out". */
export function App() {
  const [session, setSession] = useState<Session>()
  /** Why the tab was signed out, when the service refused the key (shown above the sign-in form). */
  const [refused, setRefused] = useState<string>()
  const signOut = (why?: string) => {
    forgetKey()
    setSession(undefined)
    setRefused(why)
  }
  return (
    <>
      <header class="top">
        <h1>Petstore partner dashboard</h1>
        {session && (
          <button type="button" onClick={() => signOut()}>
            Sign out
          </button>
        )}
      </header>
      <main>
        {session ? (
          <Sections session={session} />
        ) : (
          <SignIn
            remembered={storedKey()}
            refused={refused}
            onSignedIn={(apiKey, standing) => {
              setRefused(undefined)
              const client = clientFor(apiKey, (message) => signOut(`Signed out: ${message}`))
              setSession({ client, standing })
            }}
          />
        )}
      </main>
      <footer>
        Every number here comes from the public API (<a href="/v1/docs">its reference</a>) with your key; the
        key stays in this tab until you sign out.
      </footer>
    </>
  )
}

function Sections({ session }: { session: Session }) {
  const { client, standing } = session
  const canWrite = standing.scope === 'write'
  return (
    <>
      {!canWrite && <ReadOnlyNote />}
      <KeySection client={client} first={standing} />
      <UsageSection client={client} />
      <EndpointsSection client={client} canWrite={canWrite} />
      <EventsSection client={client} />
      <OrdersSection client={client} />
    </>
  )
}
