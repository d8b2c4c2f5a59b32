import { performance } from 'node:perf_hooks'
import { eventBodyOf, eventIdOf } from '../events/events.repository.js'
import { VERSION } from '../version.js'
import { type AddressRules, checkWebhookUrl, WebhookUrlError } from './address.js'
import type { AttemptOutcome, ClaimedAttempt } from './attempts.repository.js'
import { type createAgentPool, postWebhook } from './send.js'
import { signatureHeader } from './signature.js'

const USER_AGENT = `petstore-webhooks/${VERSION}`

/**
 * Makes one attempt: the URL judged again by the address rules (its name looked up once, the connection
 * pinned to the address that passed), the event signed for every current secret and POSTed, all within
 * `timeoutMs`. Never throws: a refusal, a timeout or an abort is a failed outcome.
 */
export async function makeAttempt(
  claimed: ClaimedAttempt,
  options: {
    rules: AddressRules
    timeoutMs: number
    signal: AbortSignal
    now: () => number
    agents: ReturnType<typeof createAgentPool>
  },
): Promise<AttemptOutcome> {
  const startedAt = options.now()
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  try {
    const { url, address } = await withinTime(
      checkWebhookUrl(claimed.endpoint.url, options.rules),
      options.timeoutMs,
    )
    const body = eventBodyOf(claimed.event)
    const id = eventIdOf(claimed.event.seq)
    const timestamp = Math.floor(startedAt / 1000)
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(claimed.endpoint.secrets, id, timestamp, body),
    }
    const timeoutMs = Math.max(1, options.timeoutMs - elapsed())
    const agent = options.agents.agentFor(claimed.endpoint.id, url, address)
    const response = await postWebhook({
      url,
      address,
      headers,
      body,
      timeoutMs,
      signal: options.signal,
      agent,
    })
    const { httpStatus, error, retryAfterMs } = response
    return { startedAt, httpStatus, error, retryAfterMs, durationMs: elapsed() }
  } catch (error) {
    const reason = error instanceof WebhookUrlError ? error.message : 'the attempt failed before sending'
    return { startedAt, httpStatus: null, error: reason, durationMs: elapsed() }
  }
}

/** The lookup of the URL's name has the attempt's time too (the system resolver has no deadline). */
function withinTime<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new WebhookUrlError(`the host name was not resolved within ${timeoutMs} ms`)),
      timeoutMs,
    )
  })
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}
