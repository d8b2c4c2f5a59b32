import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { ref } from '../schema-ref.js'
import { etagOf, ifMatchVersions } from './pets.etag.js'
import { deletePetResponses, updatePetResponses } from './pets.responses.js'
import { PetParams, PetPatch } from './pets.schemas.js'
import type { PetService } from './pets.service.js'

const IF_MATCH = {
  type: 'object',
  properties: {
    'if-match': {
      type: 'string',
      description: 'Change the animal only if it is still in the state of this ETag (else 412).',
    },
  },
} as const
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
          "animal is open its status is the order's to move, and once an order delivered it, it stays `sold`. " +
          'A patch that leaves every field as it is changes nothing: the ETag stays and no event is sent.',
        ...experimental,
        params: PetParams,
        headers: IF_MATCH,
        body: ref(PetPatch),
        response: updatePetResponses,
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
        response: deletePetResponses,
      },
    },
    async (request, reply) => {
      await pets.deletePet(request.params.petId)
      return reply.code(204).send(null)
    },
  )
}
