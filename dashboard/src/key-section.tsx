import type { PetstoreClient, RateLimitStatus } from '@petstore/client'
import { useEffect, useRef } from 'preact/hooks'
import { DataTable } from './data-table.js'
import { formatCountdown, formatNumber, Time } from './format.js'
import { useLoad, useNow } from './load.js'
import { Problem } from './problem.js'

/** How often the limits are asked again (`GET /v1/rate_limit` is not counted against them). */
const STANDING_EVERY_MS = 5_000

type Window = RateLimitStatus['limits']['minute']

/** The key (plan, scope, expiry) and its limits, live; a ban with its countdown. */
export function KeySection({ client, first }: { client: PetstoreClient; first: RateLimitStatus }) {
  const standing = useLoad(() => client.getRateLimit(), 'standing', STANDING_EVERY_MS)
  // Signed in: keyboard and screen-reader users land on the first section, not back at the top.
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => heading.current?.focus(), [])
  const now = useNow()
  const current = standing.data ?? first
  const bannedUntil = current.bannedUntil === null ? null : current.bannedUntil * 1000
  return (
    <section class="card" aria-labelledby="key-title">
      <h2 id="key-title" tabIndex={-1} ref={heading}>
        Your key and its limits
      </h2>
      <dl class="facts">
        <dt>Plan</dt>
        <dd>{current.plan}</dd>
        <dt>Scope</dt>
        <dd>{current.scope === 'write' ? 'write (every operation)' : 'read (GET only)'}</dd>
        <dt>Expires</dt>
        <dd>{current.expiresAt === null ? 'never' : <Time at={current.expiresAt} />}</dd>
        <dt>Rotation</dt>
        <dd>
          {current.rotationPendingUntil ? (
            <>
              pending: the replaced secret works until <Time at={current.rotationPendingUntil} />
            </>
          ) : (
            'none pending'
          )}
        </dd>
      </dl>
      {bannedUntil !== null && bannedUntil > now && (
        <p class="ban" role="status">
          Banned for too many refused requests: every call is refused for another{' '}
          <strong class="countdown">{formatCountdown(bannedUntil - now)}</strong> (until{' '}
          <Time at={bannedUntil} />
          ).
        </p>
      )}
      <DataTable
        caption="Rate limits, as of the last check (every 5 s)"
        columns={['Window', 'Limit', 'Used', 'Left', 'Resets']}
      >
        <WindowRow name="minute" window={current.limits.minute} now={now} />
        <WindowRow name="day" window={current.limits.day} now={now} />
      </DataTable>
      <Problem error={standing.error} />
    </section>
  )
}

function WindowRow({ name, window, now }: { name: string; window: Window; now: number }) {
  const resetAt = window.reset * 1000
  return (
    <tr data-window={name}>
      <th scope="row">{name === 'minute' ? 'This minute' : 'Today'}</th>
      <td data-field="limit">{formatNumber(window.limit)}</td>
      <td data-field="used">{formatNumber(window.limit - window.remaining)}</td>
      <td data-field="remaining">{formatNumber(window.remaining)}</td>
      <td>
        in {formatCountdown(resetAt - now)} (<Time at={resetAt} />)
      </td>
    </tr>
  )
}
