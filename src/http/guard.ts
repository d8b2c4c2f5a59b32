import type { Attributes } from '@opentelemetry/api'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Clock } from '../clock.js'
import { AppError } from '../errors.js'
import type { Decision, Limits, RateLimitStore } from '../rate-limit/rate-limit.port.js'
import { ipSubject, keySubject } from '../rate-limit/subjects.js'
import { retryAfterOf } from '../rate-limit/windows.js'
import { annotate, tracingEnabled } from '../tracing/tracing.js'
import { countHeader } from './header-lines.js'
import type { Metrics } from './metrics.js'
import { malformedTargetError } from './request-target.js'

/**
 * A verified key as the guard needs it: its account, limits and scope. The feature that issues keys adds
 * what its own routes read (TypeScript declaration merging), so http/ never imports it.
 */
export interface Principal {
  readonly id: number
  readonly limits: Limits
  /** `read`: GET and HEAD only (CONTRACT §10). */
  readonly scope: 'read' | 'write'
}

/** Who sent an API request, and what the limiter decided: set once by the guard, read by routes and headers. */
export interface Caller {
  /** The verified key (its id is the account); null when the request was counted per client IP. */
  apiKey: Principal | null
  limits: Limits
  rateLimit: Decision
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on every request of the API scope that reached the limiter; null elsewhere. */
    caller: Caller | null
  }
  interface FastifyContextConfig {
    /** A route that only shows the caller's standing: looked at by the limiter, never counted. */
    uncounted?: boolean
  }
}

export interface GuardDeps {
  /** The principal of a bearer token, or the 401 AppError saying why there is none. */
  authenticate(token: string): Principal | Promise<Principal>
  /** Limits of a request counted per client IP (no key, or a refused one). */
  anonymousLimits: Limits
  rateLimitStore: RateLimitStore
  clock: Clock
  metrics: Metrics
}

/** Methods of no operation that writes: GET and HEAD read; OPTIONS is only ever CORS's (see `writes`). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])
const BEARER = /^Bearer +(\S+) *$/i

/**
 * The one step every request of the API scope passes (every route registered in it, and its not-found
 * handler: unknown methods and sub-paths included): authenticate the bearer key, count the request (per
 * key, or per client IP with the Free numbers when the key is missing or refused, so 401s are counted and
 * keys cannot be guessed at speed), then refuse it (429, then 401) or let it through with
 * `request.caller` set. It guards a request because of where its route is registered, never because of
 * its path. Synchronous whenever the key lookup and the limiter can answer from memory.
 */
export function registerGuard(scope: FastifyInstance, deps: GuardDeps): void {
  scope.decorateRequest('caller', null)
  scope.addHook('onRequest', (request, _reply, done) => {
    try {
      const pending = guard(request, deps)
      if (pending) pending.then(() => done(), done)
      else done()
    } catch (error) {
      done(error as Error)
    }
  })
}

/**
 * The guard's decision for one request: sets `request.caller`, and throws the refusal (429) or the
 * authentication failure (401, or 400 for an ambiguous Authorization).
 */
function guard(request: FastifyRequest, deps: GuardDeps): Promise<void> | undefined {
  const ip = request.ip
  let verified: Principal | Promise<Principal>
  try {
    verified = deps.authenticate(bearerToken(request))
  } catch (error) {
    return admit(request, deps, ip, null, authFailure(error))
  }
  if (!(verified instanceof Promise)) return admit(request, deps, ip, verified, null)
  return verified.then(
    (apiKey) => admit(request, deps, ip, apiKey, null),
    (error) => admit(request, deps, ip, null, authFailure(error)),
  )
}

/**
 * Counts the request, records the caller, and throws the refusal, the authentication failure or the
 * missing scope (after counting: a `read` key's write counts like any request). The scope is judged only
 * for an operation that writes: an unknown path or method gets its 404 or 405 first, a malformed URL its
 * 400. A verified key asking for its own standing (`/v1/rate_limit`) is looked at, not counted, and
 * answered even while banned.
 */
function admit(
  request: FastifyRequest,
  deps: GuardDeps,
  ip: string,
  apiKey: Principal | null,
  failure: AppError | null,
): Promise<void> | undefined {
  const limits = apiKey ? apiKey.limits : deps.anonymousLimits
  const subject = apiKey ? keySubject(apiKey.id) : ipSubject(ip)
  const standing = apiKey !== null && isStandingRequest(request)
  const store = deps.rateLimitStore
  const now = deps.clock.now()
  const decided = standing ? store.peek(subject, limits, now) : store.consume(subject, limits, now)
  const settle = (rateLimit: Decision) => {
    request.caller = { apiKey, limits, rateLimit }
    if (tracingEnabled()) annotate(spanAttributes(apiKey, rateLimit))
    if (standing) return
    if (rateLimit.outcome !== 'allowed') {
      deps.metrics.rateLimitRefusals.inc({ reason: rateLimit.outcome, subject: apiKey ? 'key' : 'ip' })
      throw refusal(rateLimit, apiKey ? 'this API key' : 'this client')
    }
    // A URL that does not decode is a 400 with or without a key (CONTRACT §12), once counted.
    if (failure) throw malformedTargetError(request) ?? failure
    if (apiKey?.scope === 'read' && writes(request))
      throw malformedTargetError(request) ?? insufficientScope(request.method)
  }
  if (decided instanceof Promise) return decided.then(settle)
  settle(decided)
  return undefined
}

/** What the request's span says of the caller: the key's id and account (never the key), plan, limiter. */
function spanAttributes(apiKey: Principal | null, rateLimit: Decision): Attributes {
  return {
    'petstore.key.id': apiKey?.id,
    'petstore.account.id': apiKey?.id,
    'petstore.plan': apiKey?.plan ?? 'anonymous',
    'petstore.key.scope': apiKey?.scope,
    ...rateLimitAttributes(rateLimit),
  }
}

/** What a request's span says of the limiter's decision: the API's and the public surface's alike. */
export function rateLimitAttributes(rateLimit: Decision): Attributes {
  return { 'petstore.rate_limit.decision': rateLimit.outcome }
}

/**
 * The token of an `Authorization: Bearer <token>` header, or the error that says what is wrong with it.
 * Node keeps only the first of repeated Authorization headers: two are refused, not guessed at (§12).
 */
function bearerToken(request: FastifyRequest): string {
  const authorization = request.headers.authorization
  if (authorization !== undefined && countHeader(request.raw.rawHeaders, 'authorization') > 1) {
    throw new AppError('invalid_request', 'send the Authorization header once, with one API key')
  }
  if (!authorization) {
    throw new AppError('unauthorized', 'an API key is required: send Authorization: Bearer <API key>', {
      'www-authenticate': 'Bearer',
    })
  }
  const token = BEARER.exec(authorization)?.[1]
  if (!token)
    throw new AppError(
      'unauthorized',
      'Authorization must use the Bearer scheme: Authorization: Bearer <API key>',
    )
  return token
}

/** A refused key is a 401 with an RFC 6750 challenge; anything else (the database down) stays as it is. */
function authFailure(error: unknown): AppError {
  if (error instanceof AppError && error.code === 'invalid_request') return error
  if (!(error instanceof AppError) || error.code !== 'unauthorized') throw error
  if (error.headers['www-authenticate']) return error
  return new AppError('unauthorized', error.message, { 'www-authenticate': 'Bearer error="invalid_token"' })
}

/**
 * Whether the request reached an operation that writes. The guard runs once the router has chosen, so an
 * unmatched path or method is the not-found handler's (`is404`: its 404, or 405 with Allow). OPTIONS
 * matches only CORS's catch-all route, which hands any request that is not a preflight to that handler.
 */
function writes(request: FastifyRequest): boolean {
  return !request.is404 && !SAFE_METHODS.has(request.method)
}

function insufficientScope(method: string): AppError {
  return new AppError('insufficient_scope', `this API key has the read scope: ${method} needs a write key`, {
    'www-authenticate': 'Bearer error="insufficient_scope"',
  })
}

/**
 * Whether the route only looks at the caller's standing (its config says `uncounted`). Every API request
 * with a key asks: the cheap look at the target comes first (routeOptions builds an object).
 */
function isStandingRequest(request: FastifyRequest): boolean {
  return request.url.includes('rate_limit') && request.routeOptions.config.uncounted === true
}

function refusal(decision: Exclude<Decision, { outcome: 'allowed' }>, who: string): AppError {
  const retryAfter = retryAfterOf(decision)
  if (decision.outcome === 'banned') {
    return new AppError(
      'key_banned',
      `${who} is banned for ${retryAfter} more seconds for sending requests after being rate limited`,
      { 'retry-after': retryAfter },
    )
  }
  const window = decision.refusedBy
  return new AppError(
    'rate_limited',
    `per-${window.name} limit of ${window.limit} requests reached; retry in ${retryAfter} seconds`,
    { 'retry-after': retryAfter },
  )
}

/** The verified key of a request the guard let through: routes behind the guard call this. */
export function callerKeyOf(request: FastifyRequest): Principal {
  const apiKey = request.caller?.apiKey
  if (!apiKey) throw new Error('route reached without a verified API key')
  return apiKey
}
