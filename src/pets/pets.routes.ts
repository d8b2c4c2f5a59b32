import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.js'
import { AppError } from '../errors.js'
import { callerKeyOf } from '../http/guard.js'
import { publicUrlOf } from '../http/public-url.js'
import { idempotencyKeyOf } from '../idempotency/idempotency.js'
import { parseInteger } from '../integer.js'
import { nextPageLink } from '../pagination/link.js'
import { ref } from '../schema-ref.js'
import { deprecationHeaders } from './pets.deprecation.js'
import { etagOf } from './pets.etag.js'
import { CreatePetHeaders, createPetResponses, getPetResponses, listPetsResponses } from './pets.responses.js'
import { DEFAULT_PAGE_SIZE, ListPetsQuery, NewPet, PetParams, type PetStatus } from './pets.schemas.js'
import type { PetPage, PetService } from './pets.service.js'

const JSON_TYPE = 'application/json; charset=utf-8'

export function registerPetRoutes(app: FastifyInstance, deps: { pets: PetService; config: Config }): void {
  const { pets, config } = deps
  const api = app.withTypeProvider<TypeBoxTypeProvider>()
  // A page object is the same while it is fresh (see pets.service.ts): its JSON is written once.
  const pageBodies = new WeakMap<PetPage, string>()

  api.get(
    '/pets',
    {
      schema: {
        operationId: 'listPets',
        summary: 'List animals, optionally filtered by status',
        description:
          'Returns up to `limit` animals in ascending id order, only those with `status` when given; the ' +
          'next page is linked from the `Link: rel="next"` header (absent on the last page). With ' +
          '`?id=1,2,3` it returns just those of the animals that exist (experimental).',
        tags: ['pets'],
        'x-stability': 'stable',
        querystring: ListPetsQuery,
        response: listPetsResponses,
      },
    },
    async (request, reply) => {
      const { limit = DEFAULT_PAGE_SIZE, status, cursor, id } = request.query
      if (id !== undefined) {
        const { records, named } = await listByIds(id, status, cursor)
        // getPet's replacement carries what getPet carries: naming one pet, its ETag (CONTRACT §11).
        const [only] = records
        if (named === 1 && only) reply.header('etag', etagOf(only))
        return reply.send(records.map((record) => record.pet))
      }
      const page = await pets.listPets({ limit, status, cursor })
      if (page.nextCursor) {
        reply.header(
          'link',
          nextPageLink(publicUrlOf(config, request), '/pets', { limit, status }, page.nextCursor),
        )
      }
      let body = pageBodies.get(page)
      if (body === undefined) {
        // The route's own response serializer: the same bytes as returning `page.items`.
        body = reply.serialize(page.items) as string
        pageBodies.set(page, body)
      }
      return reply.type(JSON_TYPE).send(body as never)
    },
  )

  api.post(
    '/pets',
    {
      schema: {
        operationId: 'createPet',
        summary: 'Add an animal',
        description:
          'Adds an animal and returns it with its assigned id; needs a `write` key. A retry that sends the ' +
          'same `Idempotency-Key` and body gets the animal the first request added (`Idempotent-Replayed: ' +
          'true`) instead of adding another; the same key with another body is a 422.',
        tags: ['pets'],
        'x-stability': 'stable',
        headers: CreatePetHeaders,
        body: ref(NewPet),
        response: createPetResponses,
      },
    },
    async (request, reply) => {
      const created = await pets.createPet({
        apiKeyId: callerKeyOf(request).id,
        newPet: request.body,
        idempotencyKey: idempotencyKeyOf(request.raw),
      })
      if (created.replayed) reply.header('idempotent-replayed', 'true')
      reply.header('location', `${publicUrlOf(config, request)}/pets?id=${created.pet.id}`)
      return reply.code(201).header('etag', etagOf(created)).send(created.pet)
    },
  )

  api.get(
    '/pets/:petId',
    {
      schema: {
        operationId: 'getPet',
        summary: 'Fetch one animal (deprecated: use listPets with ?id=)',
        description:
          'Returns one animal with its `ETag`. Deprecated since 1 January 2026 (`Deprecation`, `Sunset` ' +
          'and `Link: rel="successor-version"` headers): from 5 December 2030 it answers 410 `gone`; ' +
          'use listPets with `?id=<petId>` instead: it carries the same `ETag` when it names one animal.',
        tags: ['pets'],
        deprecated: true,
        'x-stability': 'deprecated',
        params: PetParams,
        response: getPetResponses,
      },
      // Every response that passed authentication carries them, 429 and 400 included.
      onSend: (request, reply, payload, done) => {
        if (request.caller?.apiKey)
          reply.headers(deprecationHeaders(publicUrlOf(config, request), request.params.petId))
        done(null, payload)
      },
    },
    async (request, reply) => {
      const record = await pets.getPet(request.params.petId)
      return reply.header('etag', etagOf(record)).send(record.pet)
    },
  )

  /** `?id=1,2,3`: those pets that exist, ascending (CONTRACT §11). */
  async function listByIds(idList: string, status: PetStatus | undefined, cursor: string | undefined) {
    if (cursor !== undefined) throw new AppError('invalid_request', 'id and cursor cannot be combined')
    const ids = [...new Set(idList.split(',').map(parseInteger))]
    if (ids.some((id) => !Number.isSafeInteger(id))) {
      throw new AppError('invalid_request', 'id must list integers from 1 to 9007199254740991')
    }
    return { records: await pets.listPetsByIds(ids, status), named: ids.length }
  }
}
