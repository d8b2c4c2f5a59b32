import { Ajv, type ErrorObject } from 'ajv'
import type { FastifySchemaCompiler } from 'fastify'
import { AppError } from '../errors.js'
import { parseInteger } from '../integer.js'

type JsonSchema = {
  type?: string
  /** What a value must be, in words for a message: `<field> must be <x-expected>`. */
  'x-expected'?: string
  enum?: unknown[]
  minimum?: number
  maximum?: number
  properties?: Record<string, JsonSchema>
}

/**
 * Validates every request part with one Ajv that never coerces and never drops fields, so a wrong
 * type or an unknown field is a 400. Query strings and path parameters are text: integers are parsed
 * from plain decimal digits only (`5abc`, `2.5`, `0x10` and ` 5` stay text and fail).
 * Failures become AppErrors whose message names the field and what it must be.
 */
export function createValidatorCompiler(sharedSchemas: readonly object[]): FastifySchemaCompiler<JsonSchema> {
  const ajv = new Ajv({
    coerceTypes: false,
    removeAdditional: false,
    useDefaults: true,
    verbose: true,
    strict: true,
  })
  ajv.addFormat('int64', true)
  // An annotation for messages; descriptions are written for the docs page, not for error messages.
  ajv.addKeyword({ keyword: 'x-expected', schemaType: 'string' })
  for (const schema of sharedSchemas) ajv.addSchema(schema)

  return ({ schema, httpPart }) => {
    const validate = ajv.compile(schema)
    const fromText = httpPart === 'querystring' || httpPart === 'params'
    return (data: unknown) => {
      const input = fromText ? parseTextFields(schema, data as Record<string, unknown>) : data
      if (input instanceof AppError) return { error: input }
      if (validate(input)) return { value: input }
      return { error: new AppError('invalid_request', describeError(validate.errors?.[0], httpPart)) }
    }
  }
}

function parseTextFields(
  schema: JsonSchema,
  data: Record<string, unknown>,
): Record<string, unknown> | AppError {
  const parsed: Record<string, unknown> = { ...data }
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    const value = parsed[name]
    if (Array.isArray(value)) return new AppError('invalid_request', `${name} must be given only once`)
    const number = field.type === 'integer' && typeof value === 'string' ? parseInteger(value) : Number.NaN
    if (!Number.isNaN(number)) parsed[name] = number
  }
  return parsed
}

function describeError(error: ErrorObject | undefined, httpPart: string | undefined): string {
  if (!error) return `the ${httpPart ?? 'request'} is not valid`
  const path = error.instancePath.split('/').filter(Boolean).join('.')
  // Header names are lower-cased by Node: show them as clients write them.
  const field = httpPart === 'headers' ? path.replace(/(^|-)[a-z]/g, (start) => start.toUpperCase()) : path
  const params = error.params as Record<string, unknown>
  const schema = error.parentSchema as JsonSchema
  switch (error.keyword) {
    case 'required':
      return `${params.missingProperty} is required`
    case 'additionalProperties': {
      const allowed = Object.keys(schema.properties ?? {}).join(', ')
      return `unknown field "${params.additionalProperty}": the allowed fields are ${allowed}`
    }
    case 'pattern':
      return `${field} must be ${schema['x-expected'] ?? 'well-formed'}`
    case 'minProperties': {
      const fields = Object.keys(schema.properties ?? {}).join(', ')
      return `the ${httpPart ?? 'request'} is empty: send at least one of ${fields}`
    }
    default:
      if (field === '')
        return httpPart === 'body' ? 'the body must be a JSON object' : `the ${httpPart} is not valid`
      return `${field} ${describeBound(error.keyword, params.limit as number) ?? `must be ${expectation(schema)}`}`
  }
}

/** The rule a size keyword of an array or a string sets, with its limit; undefined for any other keyword. */
function describeBound(keyword: string, limit: number): string | undefined {
  switch (keyword) {
    case 'minItems':
      return `must have at least ${counted(limit, 'item')}`
    case 'maxItems':
      return `must have at most ${counted(limit, 'item')}`
    case 'uniqueItems':
      return 'must not repeat an item'
    case 'minLength':
      return limit === 1 ? 'must not be empty' : `must be at least ${counted(limit, 'character')} long`
    case 'maxLength':
      return `must be at most ${counted(limit, 'character')} long`
    default:
      return undefined
  }
}

const counted = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`

/** What a value must be, for the type, enum or numeric bound it broke. */
function expectation(schema: JsonSchema): string {
  if (schema.enum) return `one of ${schema.enum.join(', ')}`
  if (schema.type !== 'integer') return TYPE_WORDS[schema.type ?? ''] ?? `of type ${schema.type}`
  const { minimum, maximum } = schema
  if (minimum !== undefined && maximum !== undefined) return `an integer from ${minimum} to ${maximum}`
  if (minimum !== undefined) return `an integer of at least ${minimum}`
  if (maximum !== undefined) return `an integer of at most ${maximum}`
  return 'an integer'
}

const TYPE_WORDS: Record<string, string> = { string: 'a string', array: 'an array', object: 'a JSON object' }
