import Type, { type TSchema } from 'typebox'
import { ERROR_CODES } from '../errors.js'
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

const REQUEST_ID_HEADER: HeaderDocs = {
  'X-Request-Id': {
    type: 'string',
    description: 'Identifies the request; the one the client sent, if sane.',
  },
}

/**
 * A response schema with its OpenAPI description and headers. The schema still serialises the body;
 * the extra keywords only feed the document.
 */
export function documented<T extends TSchema>(schema: T, description: string, headers: HeaderDocs = {}): T {
  return { ...schema, description, headers: { ...REQUEST_ID_HEADER, ...headers } }
}

/** An Error response whose description lists the codes it can carry. */
export function errorResponse(codes: string, headers: HeaderDocs = {}) {
  return documented(ref(ErrorBody), `Error: ${codes}.`, headers)
}

export const COMMON_ERRORS = {
  401: errorResponse('`unauthorized`: missing, malformed, unknown, revoked or other-environment API key', {
    'WWW-Authenticate': { type: 'string', description: 'Bearer challenge.' },
  }),
  500: errorResponse('`internal_error`: unexpected; the body never carries internals'),
  503: errorResponse('`unavailable`: the database cannot be reached; retry after the given delay', {
    'Retry-After': { type: 'integer', description: 'Seconds to wait before retrying.' },
  }),
}
