import Type, { type Static } from 'typebox'
import { CursorQuery } from '../pagination/keyset.js'
import { MAX_SAFE_ID, ref } from '../schema-ref.js'

export const DEFAULT_PAGE_SIZE = 20
/** The most ids one listPets `?id=` may name. */
export const MAX_IDS = 100

export const PetStatus = Type.Enum(['available', 'pending', 'sold'], {
  $id: 'PetStatus',
  type: 'string',
  description: 'Availability status of an animal.',
})

const Id = Type.Integer({ minimum: 1, maximum: MAX_SAFE_ID, format: 'int64' })

const petFields = {
  name: Type.String({
    description:
      "The animal's name: 1 to 100 Unicode code points after trimming surrounding white space, " +
      'no control characters. Stored trimmed, otherwise exactly as sent.',
    examples: ['Rex'],
  }),
  categoryId: Type.Integer({
    minimum: 1,
    maximum: MAX_SAFE_ID,
    format: 'int64',
    description: 'Identifier of the category the animal belongs to.',
  }),
  status: Type.Optional(ref(PetStatus)),
}

export const NewPet = Type.Object(petFields, {
  $id: 'NewPet',
  additionalProperties: false,
  description: 'Request body for creating an animal. Fields other than these three are refused.',
})

export const Pet = Type.Object(
  {
    id: { ...Id, description: 'Unique identifier assigned by the service, ascending in creation order.' },
    ...petFields,
  },
  {
    $id: 'Pet',
    additionalProperties: false,
    description: 'An animal. `status` is absent when none was given.',
  },
)

export const PetPatch = Type.Object(
  {
    name: Type.Optional(petFields.name),
    categoryId: Type.Optional(petFields.categoryId),
    status: Type.Optional(
      Type.Union([ref(PetStatus), Type.Null()], { description: 'A status, or null to remove it.' }),
    ),
  },
  {
    $id: 'PetPatch',
    additionalProperties: false,
    minProperties: 1,
    description:
      'A JSON merge patch (RFC 7396) of an animal: the fields given change, with the rules of createPet; ' +
      'the others stay. At least one field.',
  },
)

export const Pets = Type.Array(ref(Pet), {
  $id: 'Pets',
  description: 'A page of animals in ascending id order.',
})

export const ListPetsQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 100,
      default: DEFAULT_PAGE_SIZE,
      description: 'Maximum number of animals.',
    }),
  ),
  status: Type.Optional(ref(PetStatus)),
  cursor: CursorQuery,
  id: Type.Optional(
    Type.String({
      pattern: `^[1-9][0-9]{0,15}(,[1-9][0-9]{0,15}){0,${MAX_IDS - 1}}$`,
      'x-expected': `1 to ${MAX_IDS} ids from 1 to 9007199254740991, separated by commas (id=1,2,3)`,
      description:
        `Experimental: 1 to ${MAX_IDS} comma-separated ids; only those animals that exist, ascending (with ` +
        '`status`, only those that have it). Not with `cursor`. Replaces getPet after its removal.',
      examples: ['1,2,3'],
    }),
  ),
})

export const PetParams = Type.Object({
  petId: { ...Id, description: 'Identifier of the animal.' },
})

export type PetStatus = Static<typeof PetStatus>
export type NewPet = Static<typeof NewPet>
export type Pet = Static<typeof Pet>
export type PetPatch = Static<typeof PetPatch>

/** Schemas registered once by $id, so every route and the OpenAPI document refer to them by name. */
export const petSchemas = [PetStatus, NewPet, Pet, Pets, PetPatch]
