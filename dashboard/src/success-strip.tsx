import type { DeliveryAttempt } from '@petstore/client'

/**
 * The latest attempts (the delivery log's first page) as a row of cells (green: succeeded, red: failed,
 * grey: pending), oldest left, and the same in words for readers who do not see colours.
 */
export function SuccessStrip({ attempts }: { attempts: readonly DeliveryAttempt[] }) {
  if (attempts.length === 0) return null
  const finished = attempts.filter((attempt) => attempt.status !== 'pending')
  const succeeded = finished.filter((attempt) => attempt.status === 'succeeded').length
  const rate = finished.length === 0 ? undefined : Math.round((succeeded / finished.length) * 100)
  const words =
    rate === undefined
      ? `${attempts.length} latest attempts, all pending`
      : `${rate}% of the latest ${finished.length} finished attempts succeeded (${succeeded} of ${finished.length})`
  return (
    <div class="strip-wrap">
      <p class="strip-words" data-testid="success-rate">
        {words}
      </p>
      <ol class="strip" aria-hidden="true">
        {[...attempts].reverse().map((attempt) => (
          <li
            key={`${attempt.eventId}|${attempt.attempt}|${attempt.at}`}
            class={attempt.status}
            title={`${attempt.eventId} #${attempt.attempt}: ${attempt.status}`}
          />
        ))}
      </ol>
    </div>
  )
}
