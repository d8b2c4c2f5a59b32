import Type, { type TSchema } from 'typebox'
import { ERROR_CODES, ERROR_STATUS, type ErrorCode } from '../errors.js'
import { ref } from '../schema-ref.js'

export const ErrorBody = Type.Object(
  {
    code: Type.Enum(ERROR_CODES, {
      type: 'string',
      description: 'Machine-readable error code; see the list in each response.',
    }),
    message: Type.String({ description: 'One sentence a person can act on.' }),
    status: Type.Integer({ description: 'The HTTP status code of the response.' }),
    requestId: Type.Optional(Type.String({ description: 'The X-Request-Id of the response, for support.' })),
  },
  { $id: 'Error', additionalProperties: false, description: 'The body of every error response.' },
)

type HeaderDocs = Record<string, { type: 'string' | 'integer'; description: string }>

/** Headers of every response of the API operations, whatever the status. */
const COMMON_HEADERS: HeaderDocs = {
  'X-Request-Id': {
    type: 'string',
    description: 'Identifies the request; the one the client sent, if sane.',
  },
  'X-RateLimit-Limit': {
    type: 'integer',
    description: 'Requests allowed in the window with the fewest left (on a tie, the one that resets later).',
  },
  'X-RateLimit-Remaining': { type: 'integer', description: 'Requests left in that window (0 during a ban).' },
  'X-RateLimit-Reset': {
    type: 'integer',
    description: 'Unix time in seconds at which Remaining goes back up (the window end, or the ban end).',
  },
  'RateLimit-Policy': {
    type: 'string',
    description: 'IETF draft: both windows, e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`.',
  },
  RateLimit: { type: 'string', description: 'IETF draft: the binding window, e.g. `"minute";r=59;t=30`.' },
  'Cache-Control': { type: 'string', description: "`no-store`: responses carry data of the caller's key." },
  'X-Content-Type-Options': { type: 'string', description: '`nosniff`.' },
}

/**
 * A response schema with its OpenAPI description and headers. The schema still serialises the body;
 * the extra keywords only feed the document.
 */
export function documented<T extends TSchema>(schema: T, description: string, headers: HeaderDocs = {}): T {
  return { ...schema, description, headers: { ...COMMON_HEADERS, ...headers } }
}

/** One error code a response can carry: when it is sent, and a message the service writes for it. */
interface ErrorCase {
  when: string
  message: string
}

/** Any fixed id: examples show that every error body carries the response's X-Request-Id. */
const EXAMPLE_REQUEST_ID = '3f2b8c1e-7d4a-4e5b-9c6f-0a1b2c3d4e5f'

/**
 * An Error response: its description lists the codes it can carry and when, and its examples (one per
 * code, named by it) show each body as the service writes it, with the status of that code.
 */
export function errorResponse(cases: Partial<Record<ErrorCode, ErrorCase>>, headers: HeaderDocs = {}) {
  const entries = Object.entries(cases) as [ErrorCode, ErrorCase][]
  const description = `Error: ${entries.map(([code, { when }]) => `\`${code}\`: ${when}`).join('; ')}.`
  const examples = Object.fromEntries(
    entries.map(([code, { message }]) => [
      code,
      { value: { code, message, status: ERROR_STATUS[code], requestId: EXAMPLE_REQUEST_ID } },
    ]),
  )
  // For the document only (openapi.ts puts them on the response's media type); Fastify ignores the keyword.
  return { ...documented(ref(ErrorBody), description, headers), 'x-examples': examples }
}

/** A 400 whose example carries one message of the operation (the message names the field). */
export const invalidRequest = (message: string) =>
  errorResponse({
    invalid_request: { when: 'a parameter or the body breaks the rules; the message names it', message },
  })

/** The `Link` header of every paged listing (CONTRACT §3). */
export const NEXT_PAGE_LINK = {
  Link: {
    type: 'string' as const,
    description: 'RFC 8288 `<...>; rel="next"` to the next page; absent on the last page.',
  },
}

/** The largest request body Fastify's parser accepts (app.ts). */
export const BODY_LIMIT_BYTES = 64 * 1024
/** What Fastify's body parser refuses, in the words error-handler.ts answers with. */
export const BODY_TOO_LARGE = `the body must be at most ${BODY_LIMIT_BYTES / 1024} KiB`
export const NOT_JSON = 'Content-Type must be application/json'

/**
 * The refusals of a body too large or not JSON, for every operation a body can be sent to (each POST, PATCH
 * and DELETE): one that takes none still reads a body sent to it, as Fastify reads every body but a GET's.
 */
export const BODY_ERRORS = {
  413: errorResponse({
    payload_too_large: { when: `the body is over ${BODY_LIMIT_BYTES / 1024} KiB`, message: BODY_TOO_LARGE },
  }),
  415: errorResponse({ unsupported_media_type: { when: 'the body is not JSON', message: NOT_JSON } }),
}

/** What a `read` key gets from an operation that writes. */
export const INSUFFICIENT_SCOPE = errorResponse(
  {
    insufficient_scope: {
      when: 'this key has the `read` scope (GET and HEAD only); the request still counts against its limits',
      message: 'this API key has the read scope: POST needs a write key',
    },
  },
  { 'WWW-Authenticate': { type: 'string', description: '`Bearer error="insufficient_scope"`.' } },
)

const KEY_RATE_LIMITED: ErrorCase = {
  when:
    'a per-minute or per-day limit is reached (unauthenticated requests are limited per client IP ' +
    'with the Free numbers)',
  message: 'per-minute limit of 60 requests reached; retry in 12 seconds',
}

/**
 * The 429 of the rate limits and bans; an operation with a limit of its own (`ownLimit`) names it among
 * the reasons of `rate_limited` and shows its message.
 */
export function rateLimitedResponse(ownLimit?: ErrorCase) {
  const rateLimited = ownLimit
    ? { when: `${KEY_RATE_LIMITED.when}, or ${ownLimit.when}`, message: ownLimit.message }
    : KEY_RATE_LIMITED
  return errorResponse(
    {
      rate_limited: rateLimited,
      key_banned: {
        when: 'requests kept coming after 429s, so the key or IP is refused until the ban ends',
        message: 'this API key is banned for 840 more seconds for sending requests after being rate limited',
      },
    },
    {
      'Retry-After': { type: 'integer', description: 'Whole seconds until a request can be admitted again.' },
    },
  )
}

export const COMMON_ERRORS = {
  401: errorResponse(
    {
      unauthorized: {
        when:
          'missing, malformed, unknown, revoked, expired or other-environment API key, or a rotated secret ' +
          'whose grace period ended (the message says which)',
        message: 'an API key is required: send Authorization: Bearer <API key>',
      },
    },
    { 'WWW-Authenticate': { type: 'string', description: 'Bearer challenge.' } },
  ),
  429: rateLimitedResponse(),
  500: errorResponse({
    internal_error: {
      when: 'unexpected; the body never carries internals',
      message: 'something went wrong on our side; the request id identifies it for support',
    },
  }),
  503: errorResponse(
    {
      unavailable: {
        when: 'the database cannot be reached; retry after the given delay',
        message: 'the database is unavailable: retry in a moment',
      },
    },
    { 'Retry-After': { type: 'integer', description: 'Seconds to wait before retrying.' } },
  ),
}
