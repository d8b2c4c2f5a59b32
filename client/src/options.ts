import type { PetstoreWarning } from './deprecation.js'
import type { PetstoreError } from './errors.js'
import { sleep } from './signals.js'

/**
 * How to reach the service, and how patient to be with it.
 *
 * @example
 * const client = createPetstoreClient({
 *   baseUrl: 'https://petstore.example.com/v1',
 *   apiKey: process.env.PETSTORE_API_KEY ?? '',
 *   maxRetries: 3,
 *   timeoutMs: 30_000,
 * })
 */
export interface PetstoreClientOptions {
  /** The base address, ending in `/v1`: `https://petstore.example.com/v1`. */
  baseUrl: string
  /** The API key, sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string
  /** Retries of one call after a 429, a network error, a 408, 409 `idempotency_key_in_use` or a 5xx. Default 4. */
  maxRetries?: number
  /** The first backoff step in milliseconds; it doubles with each retry. Default 500. */
  baseDelayMs?: number
  /** The largest backoff step in milliseconds, added on top of any Retry-After. Default 20,000. */
  maxDelayMs?: number
  /**
   * The longest Retry-After the client waits out, in milliseconds. A longer one (a daily limit spent)
   * fails the call, and every call until then, without sending. Default 120,000.
   */
  maxRetryAfterMs?: number
  /** Time limit of each call in milliseconds, retries and waits included. Default: none. */
  timeoutMs?: number
  /** Receives warnings, such as the use of the deprecated getPet. Default: `console.warn`. */
  onWarning?: (warning: PetstoreWarning) => void
  /**
   * Told before each retry, once the client knows how long it waits: for progress messages such as
   * "rate limited; waiting 12 s". Default: one `console.warn` line when a 429 makes the call wait longer
   * than a second (so a long pause never looks like a hang); `onRetry: () => {}` silences it. It is called
   * after the rate-limit gate has learnt from the response, so a listener that throws only ends that call,
   * with its own error.
   */
  onRetry?: (retry: RetryNotice) => void
  /** The fetch to send requests with. Default: `globalThis.fetch`. */
  fetch?: (input: string, init: RequestInit) => Promise<Response>
  /** For tests and advanced use: waits `ms` milliseconds, or rejects when `signal` aborts. Default: timers. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>
  /** For tests and advanced use: a number in [0, 1) for the backoff's jitter. Default: `Math.random`. */
  random?: () => number
  /** For tests and advanced use: milliseconds since the epoch. Default: `Date.now`. */
  now?: () => number
}

/** What `onRetry` is told before a call is sent again. */
export interface RetryNotice {
  /** Why: `code` `rate_limited` (Retry-After in `rateLimit.retryAfter`), `network_error`, a 5xx, ... */
  error: PetstoreError
  /** Milliseconds until it is sent again: after a 429, what is left of the wait every call shares. */
  delayMs: number
  /** Which retry of the call this is: 1 for the first. */
  retry: number
}

/** Per call: cancel it with `signal`, or bound it with `timeoutMs` (overrides the client's). */
export interface RequestOptions {
  signal?: AbortSignal
  timeoutMs?: number
}

export interface CreatePetOptions extends RequestOptions {
  /**
   * Makes retries safe: the service creates one pet per key and replays it afterwards. Default: a new
   * `crypto.randomUUID()` per createPet call, reused by its retries.
   */
  idempotencyKey?: string
}

/** The numbers a client uses when its options leave them out. */
export const OPTION_DEFAULTS = {
  maxRetries: 4,
  baseDelayMs: 500,
  maxDelayMs: 20_000,
  maxRetryAfterMs: 120_000,
} as const

/** A 429's wait longer than this is said by the default onRetry. */
export const LONG_WAIT_MS = 1_000

/** The default onRetry: a 429's wait longer than a second is said, in one line. */
function noticeLongWaits({ error, delayMs }: RetryNotice): void {
  if (error.code !== 'rate_limited' || delayMs <= LONG_WAIT_MS) return
  console.warn(`petstore: rate limited (429); waiting ${Math.ceil(delayMs / 1_000)} s before sending again`)
}

export type ResolvedOptions = Required<Omit<PetstoreClientOptions, 'timeoutMs'>> & { timeoutMs?: number }

function count(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < 0)
    throw new TypeError(`${name} must be a whole number, 0 or more`)
  return value
}

/** The options with their defaults; a TypeError for a base URL, key or number that cannot work. */
export function resolveOptions(options: PetstoreClientOptions): ResolvedOptions {
  if (!URL.canParse(options.baseUrl)) throw new TypeError('baseUrl must be an absolute URL ending in /v1')
  if (!options.apiKey) throw new TypeError('apiKey must be an API key')
  return {
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    apiKey: options.apiKey,
    maxRetries: count('maxRetries', options.maxRetries, OPTION_DEFAULTS.maxRetries),
    baseDelayMs: count('baseDelayMs', options.baseDelayMs, OPTION_DEFAULTS.baseDelayMs),
    maxDelayMs: count('maxDelayMs', options.maxDelayMs, OPTION_DEFAULTS.maxDelayMs),
    maxRetryAfterMs: count('maxRetryAfterMs', options.maxRetryAfterMs, OPTION_DEFAULTS.maxRetryAfterMs),
    timeoutMs: options.timeoutMs === undefined ? undefined : count('timeoutMs', options.timeoutMs, 0),
    onWarning: options.onWarning ?? ((warning) => console.warn(`petstore: ${warning.message}`)),
    onRetry: options.onRetry ?? noticeLongWaits,
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    sleep: options.sleep ?? sleep,
    random: options.random ?? Math.random,
    now: options.now ?? Date.now,
  }
}
