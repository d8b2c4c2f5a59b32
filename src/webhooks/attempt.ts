import { performance } from 'node:perf_hooks'
import { SpanStatusCode } from '@opentelemetry/api'
import { eventBodyOf, eventIdOf } from '../events/events.repository.js'
import { inSpan, linksTo, SpanKind, tracingEnabled } from '../tracing/tracing.js'
import { VERSION } from '../version.js'
import { type AddressRules, checkWebhookUrl, WebhookUrlError } from './address.js'
import type { AttemptOutcome, ClaimedAttempt } from './attempts.repository.js'
import { endpointIdOf } from './endpoints.service.js'
import type { EndpointTarget } from './ownership.repository.js'
import { type createAgentPool, postWebhook } from './send.js'
import { signatureHeader, signingSecrets } from './signature.js'

const USER_AGENT = `petstore-webhooks/${VERSION}`

/** The options of one attempt. */
interface AttemptOptions {
  rules: AddressRules
  timeoutMs: number
  signal: AbortSignal
  now: () => number
  agents: ReturnType<typeof createAgentPool>
  /** The attempt's target while it is still this instance's, asked again after the lookup (a fresh read). */
  targetIfStillOwn: () => Promise<EndpointTarget | undefined>
  /** A lookup this long or longer is followed by `targetIfStillOwn` (0 on SQLite, RECHECK_AFTER_LOOKUP_MS else). */
  recheckAfterMs: number
}

/**
 * On PostgreSQL, a lookup longer than this (one that asked DNS, not the cache) is followed by a second
 * ownership read before the POST: the first came before the lookup, and an ending, a PATCH of the URL or a
 * rotation that commits meanwhile answers READ_WINDOW_MARGIN_MS (5) past the first read's window
 * (endpoints.service.ts), which a shorter lookup fits in. On SQLite they answer at once, and the read is
 * in place: it is asked again after any.
 */
export const RECHECK_AFTER_LOOKUP_MS = 1

/**
 * Makes one attempt (`postAttempt`); with tracing on, in a CLIENT span of a trace of its own, linked to
 * the span of the change that emitted the event, however long after and on whichever instance. It names
 * the event and the endpoint by their public ids (`evt_…`, `we_…`, as partners and the API say them) and
 * the attempt number, and ends with the answer's status, the error and the duration. Never the URL's
 * path nor a header: a URL may carry a token, a header the signature.
 */
export function makeAttempt(
  claimed: ClaimedAttempt,
  target: EndpointTarget,
  options: AttemptOptions,
): Promise<AttemptOutcome | undefined> {
  if (!tracingEnabled()) return postAttempt(claimed, target, options)
  const attributes = {
    'petstore.event.id': eventIdOf(claimed.event.seq),
    'petstore.event.type': claimed.event.type,
    'petstore.webhook.endpoint.id': endpointIdOf(claimed.endpoint.id),
    'petstore.webhook.attempt': claimed.attempt,
    'petstore.webhook.redelivery': claimed.redelivery,
    ...serverOf(target.url),
  }
  const links = linksTo([claimed.event.trace_parent])
  return inSpan(
    'webhook attempt',
    attributes,
    async (span) => {
      const outcome = await postAttempt(claimed, target, options)
      if (outcome === undefined) return undefined
      span?.setAttributes({
        'http.response.status_code': outcome.httpStatus ?? undefined,
        'petstore.webhook.duration_ms': outcome.durationMs,
      })
      if (outcome.error !== null) span?.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error })
      return outcome
    },
    { kind: SpanKind.CLIENT, links, root: true },
  )
}

/** The receiver as OpenTelemetry names a server: its host (`server.address`) and port (`server.port`). */
function serverOf(raw: string): Record<string, string | number> {
  if (!URL.canParse(raw)) return {}
  const url = new URL(raw)
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port)
  return { 'server.address': url.hostname, 'server.port': port }
}

/**
 * Makes one attempt to `target` (its endpoint as the read just before it found it): the URL judged again
 * by the address rules (`checkedTarget`), the event signed for the current secret and those still in their
 * grace at its start, and POSTed, all within `timeoutMs`. Never throws: a refusal, a timeout or an abort is
 * a failed outcome. Undefined when the read after the lookup says the attempt is no longer this
 * instance's (a DELETE or a disable ended it meanwhile): nothing was sent, nothing is written down.
 */
async function postAttempt(
  claimed: ClaimedAttempt,
  first: EndpointTarget,
  options: AttemptOptions,
): Promise<AttemptOutcome | undefined> {
  const startedAt = options.now()
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  try {
    const checked = await checkedTarget(first, options, elapsed)
    if (checked === undefined) return undefined
    const { target, url, address } = checked
    const body = eventBodyOf(claimed.event)
    const id = eventIdOf(claimed.event.seq)
    const timestamp = Math.floor(startedAt / 1000)
    const secrets = signingSecrets(target, startedAt)
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(secrets, id, timestamp, body),
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

/**
 * The target's URL judged by the address rules, its name looked up once (the connection is pinned to the
 * address that passed). After a lookup of `recheckAfterMs` or more the attempt is read again: undefined
 * when it is no longer this instance's, else its target as read then, the new URL looked up in turn when a
 * PATCH changed it meanwhile (nothing goes to the URL it replaced).
 */
async function checkedTarget(first: EndpointTarget, options: AttemptOptions, elapsed: () => number) {
  let target = first
  for (;;) {
    const lookupStarted = performance.now()
    const timeoutMs = Math.max(1, options.timeoutMs - elapsed())
    const { url, address } = await withinTime(checkWebhookUrl(target.url, options.rules), timeoutMs)
    if (performance.now() - lookupStarted < options.recheckAfterMs) return { target, url, address }
    const now = await options.targetIfStillOwn()
    if (now === undefined) return undefined
    if (now.url === target.url) return { target: now, url, address }
    target = now
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
