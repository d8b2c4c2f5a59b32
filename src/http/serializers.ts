import SerializerSelector from '@fastify/fast-json-stringify-compiler'

type SerializerFactory = ReturnType<typeof SerializerSelector>
type Serializer = ReturnType<ReturnType<SerializerFactory>>

/**
 * Keywords a response schema carries for the OpenAPI document only (`documented`, `errorResponse` in
 * error.schemas.ts): they never change how a body is written.
 */
const DOCUMENT_ONLY = new Set(['description', 'headers', 'examples'])

/**
 * Fastify's serializers (fast-json-stringify), each compiled once per distinct schema instead of once per
 * route and status. Fastify compiles one for every response of every route at start-up: 270 here, most of
 * them the one Error body under another description. Compiling one per schema without its top-level
 * document keywords makes about a fifth as many, and the same functions write the same bytes.
 */
export function sharedSerializers(): SerializerFactory {
  const compilerFor = SerializerSelector()
  return (externalSchemas, options) => {
    const compile = compilerFor(externalSchemas, options)
    const compiled = new Map<string, Serializer>()
    return (route) => {
      const key = JSON.stringify(withoutDocumentKeywords(route.schema))
      let serializer = compiled.get(key)
      if (serializer === undefined) {
        serializer = compile(route)
        compiled.set(key, serializer)
      }
      return serializer
    }
  }
}

function withoutDocumentKeywords(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null) return schema
  return Object.fromEntries(Object.entries(schema).filter(([keyword]) => !DOCUMENT_ONLY.has(keyword)))
}
