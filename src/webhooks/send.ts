import type { ClientRequest, IncomingMessage } from 'node:http'
import { Agent as HttpAgent, request as httpRequest } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import { StringDecoder } from 'node:string_decoder'
import { parseRetryAfter } from '@petstore/client'
import { pinnedLookup, type ResolvedAddress } from './address.js'

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
  agent?: HttpAgent | undefined
}

export interface WebhookResponse {
  /** null when no HTTP answer came (timeout, refused connection, TLS error, abort). */
  httpStatus: number | null
  /** A short description of what went wrong, null on a 2xx: `timed out after 15000 ms`, `connection refused`, `HTTP 302 (redirects are not followed)`, `HTTP 500: <first bytes of the body>`... */
  error: string | null
  /** Retry-After of a 429/503, in ms (delta-seconds or an HTTP date), else undefined. */
  retryAfterMs?: number
  durationMs: number
  /** At most 1024 bytes of the response body, as text. */
  bodyExcerpt: string
}

type Outcome = Omit<WebhookResponse, 'durationMs'>

/** The status and what was read of the body so far. */
interface Answer {
  status: number
  retryAfter: string | undefined
  excerpt: string
  bytes: number
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
    const { signal, timeoutMs } = request
    if (signal?.aborted) return resolve(noAnswer('aborted'))
    // Created first: if it throws (a header Node refuses), no timer or listener is left behind.
    const req = send(request)
    let answer: Answer | undefined
    let settled = false
    // Once an answer has come, it is judged on its status whatever stops the body: the receiver spoke.
    // A connection is kept (to go back to its agent) only when the answer was read to its end.
    const finish = (failure: string, complete = false) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      if (!complete) req.destroy()
      resolve(answer ? judge(answer) : noAnswer(failure))
    }
    const onAbort = () => finish('aborted')
    const timer = setTimeout(() => finish(`timed out after ${timeoutMs} ms`), timeoutMs)
    signal?.addEventListener('abort', onAbort, { once: true })
    req.on('error', (err) => finish(describeFailure(err)))
    req.on('response', (res) => {
      answer = readAnswer(res, (complete) => finish('the answer broke off', complete))
    })
    req.end(request.body)
  })
}

function send({ url, address, headers, body, agent }: WebhookRequest): ClientRequest {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest
  return request(url, {
    method: 'POST',
    // Without an agent of the pool, a fresh connection. The pool's agents are one per (origin, checked
    // address), so a kept-alive socket always goes where a new one would.
    agent: agent ?? false,
    lookup: pinnedLookup(address),
    // Later keys win in Node's headers object whatever their case, so this length is the real one.
    headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
  })
}

/** Endpoints-at-addresses whose connections are kept alive at once; the oldest is closed beyond. */
const MAX_AGENTS = 2_048
/** Idle kept-alive connections per agent (an endpoint has at most 4 requests in flight). */
const FREE_SOCKETS = 4

/**
 * Kept-alive connections for webhook attempts: one agent per endpoint, URL origin and checked address, so
 * an attempt to an endpoint that answered a moment ago skips the TCP (and TLS) handshake, each endpoint
 * keeps the 4 connections its 4 places use (endpoints that share a host do not close each other's), and a
 * socket is only ever reused towards the address it was opened to.
 */
export function createAgentPool() {
  const agents = new Map<string, HttpAgent>()
  return {
    agentFor(endpointId: number, url: URL, address: ResolvedAddress): HttpAgent {
      const key = `${endpointId} ${url.origin} ${address.address}`
      const known = agents.get(key)
      if (known) return known
      const oldest = agents.size >= MAX_AGENTS ? agents.keys().next().value : undefined
      if (oldest !== undefined) {
        agents.get(oldest)?.destroy()
        agents.delete(oldest)
      }
      const options = { keepAlive: true, maxFreeSockets: FREE_SOCKETS, timeout: 60_000 }
      const agent = url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options)
      agents.set(key, agent)
      return agent
    },
    destroy(): void {
      for (const agent of agents.values()) agent.destroy()
      agents.clear()
    },
  }
}

/**
 * Collects up to EXCERPT_BYTES of the body; `done` once that is read, the body ends (`complete`: the
 * connection may be reused) or it breaks.
 */
function readAnswer(res: IncomingMessage, done: (complete?: boolean) => void): Answer {
  const retryAfter = res.headers['retry-after']
  const answer: Answer = { status: res.statusCode ?? 0, retryAfter, excerpt: '', bytes: 0 }
  // Holds back a character cut in half at the limit rather than writing U+FFFD for it.
  const decoder = new StringDecoder('utf8')
  res.on('data', (chunk: Buffer) => {
    const kept = chunk.subarray(0, EXCERPT_BYTES - answer.bytes)
    answer.excerpt += decoder.write(kept)
    answer.bytes += kept.length
    if (answer.bytes >= EXCERPT_BYTES) done()
  })
  res.on('end', () => done(true))
  res.on('error', () => done())
  res.on('close', () => done())
  return answer
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
