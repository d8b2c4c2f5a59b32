import Type from 'typebox'
import { COMMON_ERRORS, documented, errorResponse, INSUFFICIENT_SCOPE } from '../http/error.schemas.js'
import { ref } from '../schema-ref.js'
import { Pet, Pets } from './pets.schemas.js'

/** Request headers of createPet. */
export const CreatePetHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      pattern: '^[\\x20-\\x7E]{1,255}$',
      description: '1 to 255 printable ASCII characters',
    }),
  ),
})

const INVALID = '`invalid_request`: a parameter or the body breaks the rules; the message names the field'

export const listPetsResponses = {
  200: documented(ref(Pets), 'A page of animals in ascending id order.', {
    Link: {
      type: 'string',
      description: 'RFC 8288 `<...>; rel="next"` to the next page; absent on the last page.',
    },
  }),
  400: errorResponse(INVALID),
  ...COMMON_ERRORS,
}

export const createPetResponses = {
  201: documented(ref(Pet), 'The animal was added; the body carries its assigned id.', {
    'Idempotent-Replayed': {
      type: 'string',
      description: '`true` when an earlier request with the same Idempotency-Key created this animal.',
    },
  }),
  400: errorResponse(`${INVALID}; also an Idempotency-Key that is not 1 to 255 printable ASCII characters`),
  403: INSUFFICIENT_SCOPE,
  409: errorResponse('`idempotency_key_in_use`: a request with this Idempotency-Key is still in flight'),
  413: errorResponse('`payload_too_large`: the body is over 64 KiB'),
  415: errorResponse('`unsupported_media_type`: the body is not application/json'),
  422: errorResponse('`idempotency_key_reused`: the Idempotency-Key was used with a different body'),
  ...COMMON_ERRORS,
}

const DEPRECATION_HEADERS = {
  Deprecation: {
    type: 'string',
    description: 'RFC 9745: `@<unix seconds>` since when getPet is deprecated.',
  },
  Sunset: { type: 'string', description: 'RFC 8594: Thu, 05 Dec 2030 00:00:00 GMT, when getPet is removed.' },
  Link: {
    type: 'string',
    description: '`<.../pets?id={petId}>; rel="successor-version"`: listPets of this one pet replaces it.',
  },
} as const

export const getPetResponses = {
  200: documented(ref(Pet), 'The animal.', DEPRECATION_HEADERS),
  400: errorResponse(
    '`invalid_request`: petId is not an integer from 1 to 9007199254740991',
    DEPRECATION_HEADERS,
  ),
  401: COMMON_ERRORS[401],
  429: COMMON_ERRORS[429],
  404: errorResponse('`not_found`: no animal has this id', DEPRECATION_HEADERS),
  410: errorResponse('`gone`: getPet was removed at its sunset date', DEPRECATION_HEADERS),
  500: COMMON_ERRORS[500],
  503: COMMON_ERRORS[503],
}
