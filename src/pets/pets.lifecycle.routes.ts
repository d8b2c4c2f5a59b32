import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import {
  BODY_ERRORS,
  COMMON_ERRORS,
  documented,
  errorResponse,
  INSUFFICIENT_SCOPE,
} from '../http/error.schemas.js'
import { ref } from '../schema-ref.js'
import { etagOf, ifMatchVersions } from './pets.etag.js'
import { BAD_PET_ID } from './pets.responses.js'
import { Pet, PetParams, PetPatch } from './pets.schemas.js'
import type { PetService } from './pets.service.js'

const ETAG = {
  ETag: { type: 'string' as const, description: "Strong validator of the animal's current state." },
}
const IF_MATCH = {
  type: 'object',
  properties: {
    'if-match': {
      type: 'string',
      description: 'Change the animal only if it is still in the state of this ETag (else 412).',
    },
  },
} as const
const NOT_FOUND = errorResponse({
  not_found: { when: 'no animal has this id (or it was deleted)', message: 'pet 42 does not exist' },
})
const experimental = { tags: ['pets'], 'x-stability': 'experimental' }

/** PATCH and DELETE of one pet (CONTRACT §11, experimental). */
export function registerPetLifecycleRoutes(app: FastifyInstance, deps: { pets: PetService }): void {
  const { pets } = deps
  const api = app.withTypeProvider<TypeBoxTypeProvider>()

  api.patch(
    '/pets/:petId',
    {
      schema: {
        operationId: 'updatePet',
        summary: 'Change an animal (experimental)',
        description:
          'A JSON merge patch (`application/merge-patch+json` or `application/json`) of name, categoryId ' +
          'and status, with the rules of createPet; needs a `write` key. Send the ETag of the animal you ' +
          'read as If-Match, so that a change made meanwhile is not overwritten. While an order for the ' +
          "animal is open its status is the order's to move, and once an order delivered it, it stays `sold`.",
        ...experimental,
        params: PetParams,
        headers: IF_MATCH,
        body: ref(PetPatch),
        response: {
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
              message:
                'pet 42 has an open order: only the order changes its status (deliver or cancel it first)',
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
        },
      },
    },
    async (request, reply) => {
      const id = request.params.petId
      const ifMatch = request.headers['if-match']
      const record = await pets.patchPet(
        id,
        request.body,
        ifMatch === undefined ? undefined : ifMatchVersions(ifMatch, id),
      )
      return reply.header('etag', etagOf(record)).send(record.pet)
    },
  )

  api.delete(
    '/pets/:petId',
    {
      schema: {
        operationId: 'deletePet',
        summary: 'Remove an animal (experimental)',
        description:
          'Removes the animal; needs a `write` key, and no open order for it. Afterwards the animal is a 404 ' +
          'and absent from listings; its id is never given again.',
        ...experimental,
        params: PetParams,
        response: {
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
          ...COMMON_ERRORS,
        },
      },
    },
    async (request, reply) => {
      await pets.deletePet(request.params.petId)
      return reply.code(204).send(null)
    },
  )
}
