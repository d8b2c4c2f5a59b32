import { type BackoffPolicy, retryDelay } from './backoff.js'
import { errorFromResponse, networkError, PetstoreError } from './errors.js'
import { RateLimitGate } from './gate.js'
import type { RequestOptions, ResolvedOptions } from './options.js'
import { type RateLimitState, readRateLimit } from './rate-limit-state.js'
import { callSignal } from './signals.js'

/** One API request, as the client methods describe it. */
export interface RequestSpec {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  /** Below the base URL, with its query string: `/pets?limit=5`. */
  path: string
  headers?: Record<string, string>
  body?: unknown
  /** Sees the headers of every response, errors included (the deprecation notice reads them). */
  onResponse?: (headers: Headers) => void
  /** Not counted by the service (`/rate_limit`): sent past the gate, even during a ban, and not told to it. */
  ungated?: boolean
}

/**
 * Sends requests with the client's manners: every attempt passes the rate-limit gate; a 429
 * `rate_limited` is retried after the gate's shared wait; a network error, 408, 409
 * `idempotency_key_in_use` or 5xx is retried after a jittered backoff (never sooner than Retry-After)
 * when the request is safe to repeat.
 */
export class Transport {
  readonly #options: ResolvedOptions
  readonly #backoff: BackoffPolicy
  readonly #gate: RateLimitGate
  #rateLimit: Readonly<RateLimitState> = Object.freeze({})

  constructor(options: ResolvedOptions) {
    this.#options = options
    this.#backoff = {
      baseDelayMs: options.baseDelayMs,
      maxDelayMs: options.maxDelayMs,
      random: options.random,
    }
    this.#gate = new RateLimitGate({
      sleep: (ms) => options.sleep(ms),
      now: options.now,
      backoff: this.#backoff,
    })
  }

  /** The X-RateLimit-* values of the last response that had them. */
  get rateLimit(): Readonly<RateLimitState> {
    return this.#rateLimit
  }

  /** Resolves with the 2xx response; throws a PetstoreError, or the signal's reason when it aborts. */
  async send(spec: RequestSpec, call: RequestOptions): Promise<Response> {
    const { maxRetries, timeoutMs, sleep, onRetry } = this.#options
    const signal = callSignal(call.signal, call.timeoutMs ?? timeoutMs)
    for (let retries = 0; ; retries++) {
      if (!spec.ungated) await this.#gate.acquire(signal)
      const result = await this.#attempt(spec, signal)
      if (result instanceof Response) return result
      signal?.throwIfAborted()
      const waitsAtGate = refusedByKeyLimit(result) && !this.#tooLong(result)
      if (retries >= maxRetries || !(waitsAtGate || retryable(result, spec))) throw result
      // After a 429 the gate holds every call, this one included, for the shared wait.
      const delayMs = waitsAtGate
        ? this.#gate.waitLeftMs
        : retryDelay(retries, retryAfterMs(result), this.#backoff)
      onRetry({ error: result, delayMs, retry: retries + 1 })
      if (!waitsAtGate) await sleep(delayMs, signal)
    }
  }

  /** One attempt: the 2xx response, or the error; the gate and `rateLimit` are updated either way. */
  async #attempt(spec: RequestSpec, signal: AbortSignal | undefined): Promise<Response | PetstoreError> {
    const url = `${this.#options.baseUrl}${spec.path}`
    let response: Response
    try {
      response = await this.#options.fetch(url, requestInit(spec, this.#options.apiKey, signal))
    } catch (error) {
      if (!spec.ungated) this.#gate.settle(undefined)
      if (signal?.aborted) throw signal.reason
      return networkError(url, error)
    }
    const state = readRateLimit(response.headers)
    if (state)
      this.#rateLimit = Object.freeze({ limit: state.limit, remaining: state.remaining, reset: state.reset })
    const result = response.ok ? response : await errorFromResponse(response, this.#options.now())
    // An ungated request neither went through the gate nor teaches it anything.
    if (!spec.ungated) {
      if (result instanceof Response) this.#gate.settle(state)
      else this.#tellGate(result, state)
    }
    // After the gate knows: a throwing listener must not leave the gate counting this request.
    spec.onResponse?.(response.headers)
    return result
  }

  /**
   * A ban, or a wait longer than the client's patience, blocks every call; a 429 of the key's limit makes
   * all wait. A 429 of one resource's own limit (test events of an endpoint) concerns that call only.
   */
  #tellGate(error: PetstoreError, state: RateLimitState | undefined): void {
    const { now } = this.#options
    if (error.code === 'key_banned' || (refusedByKeyLimit(error) && this.#tooLong(error))) {
      this.#gate.block(error.rateLimit.retryAt ?? now(), () => blockedError(error, now()))
    } else if (refusedByKeyLimit(error)) {
      this.#gate.refuse(state, retryAfterMs(error) ?? 1000)
    } else {
      this.#gate.settle(state)
    }
  }

  #tooLong(error: PetstoreError): boolean {
    return (retryAfterMs(error) ?? 0) > this.#options.maxRetryAfterMs
  }
}

/**
 * A 429 of the key's own limit: nothing remains in its window (X-RateLimit-Remaining 0, or not said). A 429
 * while the key still has requests left is a limit of one resource (an endpoint's test events), not the key's.
 */
function refusedByKeyLimit(error: PetstoreError): boolean {
  return error.code === 'rate_limited' && (error.rateLimit.remaining ?? 0) === 0
}

/** A network error, or a 408, 409 `idempotency_key_in_use` or 5xx, of a GET or of a POST with an Idempotency-Key. */
function retryable(error: PetstoreError, spec: RequestSpec): boolean {
  const safe = spec.method === 'GET' || spec.headers?.['idempotency-key'] !== undefined
  const transient =
    error.status === 0 ||
    error.status === 408 ||
    error.status >= 500 ||
    error.code === 'idempotency_key_in_use'
  return safe && transient
}

function requestInit(spec: RequestSpec, apiKey: string, signal: AbortSignal | undefined): RequestInit {
  const headers: Record<string, string> = {
    accept: 'application/json',
    authorization: `Bearer ${apiKey}`,
    ...spec.headers,
  }
  if (spec.body === undefined) return { method: spec.method, headers, signal }
  headers['content-type'] = 'application/json'
  return { method: spec.method, headers, body: JSON.stringify(spec.body), signal }
}

function retryAfterMs(error: PetstoreError): number | undefined {
  const seconds = error.rateLimit.retryAfter
  return seconds === undefined ? undefined : seconds * 1000
}

/** What a call blocked by an earlier ban or long Retry-After throws: the same code, no request sent. */
function blockedError(cause: PetstoreError, now: number): PetstoreError {
  const retryAt = cause.rateLimit.retryAt ?? now
  const retryAfter = Math.max(0, Math.ceil((retryAt - now) / 1000))
  const message = `not sent: ${cause.message} (until ${new Date(retryAt).toISOString()}, ${retryAfter} s from now)`
  return new PetstoreError({
    status: cause.status,
    code: cause.code,
    message,
    rateLimit: { ...cause.rateLimit, retryAfter, retryAt },
    cause,
  })
}
