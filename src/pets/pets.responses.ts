import Type from 'typebox'
import {
  BODY_ERRORS,
  COMMON_ERRORS,
  documented,
  errorResponse,
  INSUFFICIENT_SCOPE,
  NEXT_PAGE_LINK,
} from '../http/error.schemas.js'
import { IDEMPOTENCY_MESSAGES, IDEMPOTENT_REPLAYED_HEADER } from '../idempotency/idempotency.js'
import { ref } from '../schema-ref.js'
import { Pet, Pets } from './pets.schemas.js'

/** Request headers of createPet. */
export const CreatePetHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      pattern: '^[\\x20-\\x7E]{1,255}$',
      'x-expected': '1 to 255 printable ASCII characters',
      description: '1 to 255 printable ASCII characters',
    }),
  ),
})

const INVALID = {
  when: 'a parameter or the body breaks the rules; the message names the field',
  message: 'limit must be an integer from 1 to 100',
}

export const listPetsResponses = {
  200: documented(ref(Pets), 'A page of animals in ascending id order.', {
    ...NEXT_PAGE_LINK,
    ETag: {
      type: 'string',
      description:
        'With `?id=` naming one animal that exists: its strong validator, as getPet gives it (for `If-Match`).',
    },
  }),
  400: errorResponse({ invalid_request: INVALID }),
  ...COMMON_ERRORS,
}

export const createPetResponses = {
  201: documented(ref(Pet), 'The animal was added; the body carries its assigned id.', {
    ...IDEMPOTENT_REPLAYED_HEADER,
    Location: { type: 'string', description: 'Where to read the animal: `{base}/pets?id={id}`.' },
    ETag: { type: 'string', description: "Strong validator of the animal's current state (for `If-Match`)." },
  }),
  400: errorResponse({
    invalid_request: {
      when: `${INVALID.when}; also an Idempotency-Key that is not 1 to 255 printable ASCII characters`,
      message: 'unknown field "color": the allowed fields are name, categoryId, status',
    },
  }),
  403: INSUFFICIENT_SCOPE,
  409: errorResponse({
    idempotency_key_in_use: {
      when: 'a request with this Idempotency-Key is still in flight',
      message: IDEMPOTENCY_MESSAGES.idempotency_key_in_use,
    },
  }),
  ...BODY_ERRORS,
  422: errorResponse({
    idempotency_key_reused: {
      when: 'the Idempotency-Key was used with a different body',
      message: IDEMPOTENCY_MESSAGES.idempotency_key_reused,
    },
  }),
  ...COMMON_ERRORS,
}

/** A 400 for a petId path parameter that is no id. */
export const BAD_PET_ID = {
  when: 'petId is not an integer from 1 to 9007199254740991',
  message: 'petId must be an integer from 1 to 9007199254740991',
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
  400: errorResponse({ invalid_request: BAD_PET_ID }, DEPRECATION_HEADERS),
  401: COMMON_ERRORS[401],
  429: COMMON_ERRORS[429],
  404: errorResponse(
    { not_found: { when: 'no animal has this id', message: 'pet 42 does not exist' } },
    DEPRECATION_HEADERS,
  ),
  410: errorResponse(
    {
      gone: {
        when: 'getPet was removed at its sunset date',
        message: 'getPet was removed on 5 December 2030; use GET /pets?id=<petId>',
      },
    },
    DEPRECATION_HEADERS,
  ),
  500: COMMON_ERRORS[500],
  503: COMMON_ERRORS[503],
}

const ETAG = {
  ETag: { type: 'string' as const, description: "Strong validator of the animal's current state." },
}
const NOT_FOUND = errorResponse({
  not_found: { when: 'no animal has this id (or it was deleted)', message: 'pet 42 does not exist' },
})

export const updatePetResponses = {
  200: documented(ref(Pet), 'The animal as changed.', ETAG),
  400: errorResponse({
    invalid_request: {
      when: 'a field breaks the rules, or the patch is empty',
      message: 'status must be one of available, pending, sold',
    },
  }),
  403: INSUFFICIENT_SCOPE,
  404: NOT_FOUND,
  409: errorResponse({
    conflict: {
      when:
        'the patch sets `status` while an order for the animal is open, or after one was delivered: ' +
        'only the order moves it, and a sold animal stays sold',
      message: 'pet 42 has an open order: only the order changes its status (deliver or cancel it first)',
    },
  }),
  412: errorResponse({
    precondition_failed: {
      when: 'the animal changed since the ETag in If-Match',
      message: 'pet 42 changed since the ETag in If-Match: fetch it again',
    },
  }),
  ...BODY_ERRORS,
  ...COMMON_ERRORS,
}

export const deletePetResponses = {
  204: { type: 'null', description: 'The animal was removed.' },
  400: errorResponse({ invalid_request: BAD_PET_ID }),
  403: INSUFFICIENT_SCOPE,
  404: NOT_FOUND,
  409: errorResponse({
    conflict: {
      when: 'an order for the animal is open (placed or approved)',
      message: 'pet 42 has an open order: deliver or cancel it first',
    },
  }),
  ...BODY_ERRORS,
  ...COMMON_ERRORS,
}
