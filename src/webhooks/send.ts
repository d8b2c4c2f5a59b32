import { StringDecoder } from 'node:string_decoder'
import { parseRetryAfter } from '@petstore/client'
import { Pool, type Dispatcher as UndiciDispatcher } from 'undici'
import { pinnedLookup, type ResolvedAddress } from './address.js'
import type { AttemptOutcome } from './attempts.repository.js'

export interface WebhookRequest {
  /** A URL `checkWebhookUrl` accepted, and the address it returned with it. */
  url: URL
  address: ResolvedAddress
  headers: Record<string, string>
  body: string
  /** One deadline for connecting, sending, the answer's headers and its body. */
  timeoutMs: number
  signal?: AbortSignal
  /** Kept-alive connections to this URL's origin at this address (`createAgentPool`); else a fresh one. */
  agent?: UndiciDispatcher | undefined
}

/** What one POST came to: the attempt's outcome but for when it started, and what was read of the answer. */
export type WebhookResponse = Omit<AttemptOutcome, 'startedAt'> & {
  /** At most 1024 bytes of the response body, as text (the error's snippet is cut from it). */
  bodyExcerpt: string
}

type Outcome = Omit<WebhookResponse, 'durationMs'>

/** The status and what was read of the body so far. */
interface Answer {
  status: number
  retryAfter: string | undefined
  excerpt: string
  bytes: number
  decoder: StringDecoder
}

export const EXCERPT_BYTES = 1024
const ERROR_SNIPPET_CHARS = 200

/**
 * POSTs one webhook to the address that was checked (never a new lookup) and never follows a redirect.
 * TLS still checks the certificate against the URL's host name. Reads at most 1 KiB of the answer, then
 * hangs up, so a receiver that streams without end costs nothing. Never throws: every failure is a
 * `WebhookResponse` with `error` set.
 *
 * @example const response = await postWebhook({ url, address, headers, body, timeoutMs: 15_000 })
 */
export async function postWebhook(request: WebhookRequest): Promise<WebhookResponse> {
  const started = performance.now()
  const outcome = await exchange(request).catch((err: unknown) => noAnswer(describeFailure(err)))
  return { ...outcome, durationMs: Math.round(performance.now() - started) }
}

function exchange(request: WebhookRequest): Promise<Outcome> {
  return new Promise((resolve) => {
    const { signal, timeoutMs, url } = request
    if (signal?.aborted) return resolve(noAnswer('aborted'))
    const connections = request.agent ?? connectionsTo(url, request.address, timeoutMs)
    let answer: Answer | undefined
    /** Hangs up: set once the request has a connection (before, giving up is seen when it gets one). */
    let hangUp: (() => void) | undefined
    let settled = false
    // Once an answer has come, it is judged on its status whatever stops the body: the receiver spoke.
    // A connection is kept (to go back to its pool) only when the answer was read to its end.
    const finish = (failure: string, complete = false) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      if (!complete) hangUp?.()
      if (!request.agent) void connections.destroy()
      resolve(answer ? judge(answer) : noAnswer(failure))
    }
    const onAbort = () => finish('aborted')
    const timer = setTimeout(() => finish(`timed out after ${timeoutMs} ms`), timeoutMs)
    signal?.addEventListener('abort', onAbort, { once: true })
    // undici's handler API rather than `request`: no stream, promise or abort signal per answer.
    connections.dispatch(
      { path: `${url.pathname}${url.search}`, method: 'POST', headers: request.headers, body: request.body },
      {
        onRequestStart(controller) {
          hangUp = () => controller.abort(new Error('hung up'))
          if (settled) hangUp()
        },
        onResponseStart(_controller, status, headers) {
          // 1xx answers are informational: the answer is the one that follows.
          if (status >= 200) answer = answerOf(status, headers['retry-after'])
        },
        onResponseData(_controller, chunk) {
          if (answer && excerpt(answer, chunk)) finish('')
        },
        onResponseEnd: () => finish('the answer broke off', true),
        onResponseError: (_controller, err) => finish(describeFailure(err)),
      },
    )
  })
}

/**
 * Connections to `url`'s origin that all go to `address` (never a second lookup); TLS still checks the
 * certificate against the URL's host name. The attempt's one deadline covers connecting, sending and the
 * answer; a connection still being made then is given up after the same time (to undici's timer
 * resolution, about a second), so it cannot outlive its attempt for long. Idle connections close after
 * KEEP_ALIVE_MS, or sooner when the receiver's `Keep-Alive` says so, never later (undici would keep one
 * for up to 10 minutes on a receiver's word).
 */
function connectionsTo(url: URL, address: ResolvedAddress, connectTimeoutMs: number): Pool {
  return new Pool(url.origin, {
    connections: CONNECTIONS_PER_ENDPOINT,
    keepAliveTimeout: KEEP_ALIVE_MS,
    keepAliveMaxTimeout: KEEP_ALIVE_MS,
    connect: { lookup: pinnedLookup(address) },
    connectTimeout: connectTimeoutMs,
    headersTimeout: 0,
    bodyTimeout: 0,
  })
}

/**
 * Endpoints-at-addresses whose connections are kept alive at once; beyond, the one used longest ago is
 * closed (its requests in flight finish first).
 */
export const MAX_POOLS = 2_048
/**
 * Pools one endpoint keeps at once (a name answering several addresses, a URL changed): beyond, its own
 * used longest ago is closed.
 */
export const POOLS_PER_ENDPOINT = 4
/** Connections per endpoint (an endpoint has at most 4 requests in flight). */
export const CONNECTIONS_PER_ENDPOINT = 4
/** An idle kept-alive connection closes after this long at most, whatever the receiver's `Keep-Alive`. */
export const KEEP_ALIVE_MS = 4_000

/**
 * Kept-alive connections for webhook attempts (undici pools): one pool per endpoint, URL origin and checked
 * address, so an attempt to an endpoint that answered a moment ago skips the TCP (and TLS) handshake, each
 * endpoint keeps the 4 connections its 4 places use (endpoints that share a host do not close each
 * other's), and a socket is only ever reused towards the address it was opened to.
 */
export function createAgentPool(options: { timeoutMs: number }) {
  const pools = new Map<string, Pool>()
  return {
    agentFor(endpointId: number, url: URL, address: ResolvedAddress): Pool {
      const key = `${endpointId} ${url.origin} ${address.address}`
      const known = pools.get(key)
      if (known) {
        // Last in the map's order: the first is always the one used longest ago.
        pools.delete(key)
        pools.set(key, known)
        return known
      }
      // An endpoint whose name keeps answering new addresses (each a pool of its own) closes its own pools,
      // not other endpoints' kept-alive ones; beyond MAX_POOLS in all, the one used longest ago goes.
      const own = [...pools.keys()].filter((other) => other.startsWith(`${endpointId} `))
      const oldest =
        own.length >= POOLS_PER_ENDPOINT
          ? own[0]
          : pools.size >= MAX_POOLS
            ? pools.keys().next().value
            : undefined
      if (oldest !== undefined) {
        // Closed, not destroyed: its requests in flight finish (cut, they would fail and open a circuit).
        void pools.get(oldest)?.close()
        pools.delete(oldest)
      }
      const pool = connectionsTo(url, address, options.timeoutMs)
      pools.set(key, pool)
      return pool
    },
    destroy(): void {
      for (const pool of pools.values()) void pool.destroy()
      pools.clear()
    },
  }
}

/** An answer whose status and headers came, its body not read yet. */
function answerOf(status: number, retryAfter: string | string[] | undefined): Answer {
  // Holds back a character cut in half at the limit rather than writing U+FFFD for it.
  const decoder = new StringDecoder('utf8')
  return {
    status,
    retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
    excerpt: '',
    bytes: 0,
    decoder,
  }
}

/** Keeps what fits of `chunk` in the answer's EXCERPT_BYTES; true once they are full. */
function excerpt(answer: Answer, chunk: Buffer): boolean {
  const kept = chunk.subarray(0, EXCERPT_BYTES - answer.bytes)
  answer.excerpt += answer.decoder.write(kept)
  answer.bytes += kept.length
  return answer.bytes >= EXCERPT_BYTES
}

function judge({ status, retryAfter, excerpt }: Answer): Outcome {
  const outcome: Outcome = {
    httpStatus: status,
    error: describeStatus(status, excerpt),
    bodyExcerpt: excerpt,
  }
  const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(retryAfter, Date.now()) : undefined
  return retryAfterMs === undefined ? outcome : { ...outcome, retryAfterMs }
}

function describeStatus(status: number, excerpt: string): string | null {
  if (status >= 200 && status < 300) return null
  if (status >= 300 && status < 400) return `HTTP ${status} (redirects are not followed)`
  const snippet = excerpt.replace(/\s+/g, ' ').trim().slice(0, ERROR_SNIPPET_CHARS)
  return snippet === '' ? `HTTP ${status}` : `HTTP ${status}: ${snippet}`
}

function noAnswer(error: string): Outcome {
  return { httpStatus: null, error, bodyExcerpt: '' }
}

const NETWORK_FAILURES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset before an answer came',
  EPIPE: 'connection closed while sending',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed before an answer came',
}

/** Words for a failure before any answer; for TLS, OpenSSL's reason (`wrong version number`) or Node's message. */
function describeFailure(err: unknown): string {
  const code = String((err as NodeJS.ErrnoException | undefined)?.code ?? '')
  const words = NETWORK_FAILURES[code]
  if (words) return words
  if (code.startsWith('HPE_')) return 'the answer is not valid HTTP'
  const message = err instanceof Error ? err.message : String(err)
  if (code === 'EPROTO' || /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED)/.test(code)) {
    return `TLS failed: ${/SSL routines:[^:]*:([^:]+)/.exec(message)?.[1] ?? message}`
  }
  return message || code || 'the request failed'
}
