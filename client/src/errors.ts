import type { ServiceErrorCode } from './models.js'
import { type RateLimitState, readRateLimit, readRetryAfterMs } from './rate-limit-state.js'

/**
 * A service error code, or one of the client's own: `network_error` (no response, retries used up)
 * and `unexpected_response` (an error response that is not the service's Error body, e.g. from a proxy).
 */
export type PetstoreErrorCode = ServiceErrorCode | 'network_error' | 'unexpected_response'

export interface PetstoreErrorInit {
  status: number
  code: PetstoreErrorCode
  message: string
  requestId?: string
  rateLimit?: RateLimitState
  cause?: unknown
}

/**
 * Every failed call throws this (aborts and timeouts aside: they reject with the signal's reason, an
 * `AbortError` or `TimeoutError` DOMException, as fetch does).
 *
 * @example
 * try {
 *   await client.getPet(42)
 * } catch (error) {
 *   if (error instanceof PetstoreError && error.code === 'not_found') console.log('no pet 42')
 *   else throw error
 * }
 */
export class PetstoreError extends Error {
  /** The HTTP status; 0 when no response arrived. */
  readonly status: number
  readonly code: PetstoreErrorCode
  /** The response's X-Request-Id: quote it to the service's operators. */
  readonly requestId: string | undefined
  /** X-RateLimit-* of the response, and Retry-After with the instant it points to. */
  readonly rateLimit: RateLimitState

  constructor(init: PetstoreErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause })
    this.name = 'PetstoreError'
    this.status = init.status
    this.code = init.code
    this.requestId = init.requestId
    this.rateLimit = Object.freeze({ ...init.rateLimit })
  }
}

function isErrorBody(body: unknown): body is { code: ServiceErrorCode; message: string; requestId?: string } {
  const candidate = body as { code?: unknown; message?: unknown } | null
  return typeof candidate?.code === 'string' && typeof candidate.message === 'string'
}

/** The PetstoreError for an error response; reads (and so consumes) its body. */
export async function errorFromResponse(response: Response, now: number): Promise<PetstoreError> {
  const body: unknown = await response.json().catch(() => undefined)
  const retryAfterMs = readRetryAfterMs(response.headers, now)
  const rateLimit: RateLimitState = { ...readRateLimit(response.headers) }
  if (retryAfterMs !== undefined) {
    rateLimit.retryAfter = Math.ceil(retryAfterMs / 1000)
    rateLimit.retryAt = now + retryAfterMs
  }
  const requestId = response.headers.get('x-request-id') ?? undefined
  if (isErrorBody(body)) {
    return new PetstoreError({
      status: response.status,
      code: body.code,
      message: body.message,
      requestId,
      rateLimit,
    })
  }
  const message = `the service answered ${response.status} ${response.statusText} without an error body`
  return new PetstoreError({
    status: response.status,
    code: 'unexpected_response',
    message,
    requestId,
    rateLimit,
  })
}

/** The PetstoreError for a request that got no response. */
export function networkError(url: string, cause: unknown): PetstoreError {
  const reason = cause instanceof Error ? cause.message : String(cause)
  return new PetstoreError({
    status: 0,
    code: 'network_error',
    message: `no response from ${url}: ${reason}`,
    cause,
  })
}
