import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import YAML from 'yaml'
import type { Config } from '../config.js'
import { sha256 } from '../sha256.js'
import { whenWritable } from './pipelining.js'
import { baseAddressHeaders, publicUrlOf } from './public-url.js'

const DESCRIPTION = [
  'Manages the animals of a pet store. Every operation needs an API key sent as `Authorization: Bearer <key>`.',
  'Errors share one body, `{code, message, status}`; each response lists the codes it can carry.',
  'Every response carries `X-Request-Id`; API responses carry `Cache-Control: no-store`.',
  'A method a path does not answer gets 405 `method_not_allowed` with an `Allow` header listing the ones it ' +
    'does; an unknown path gets 404 `not_found`. Under `/v1` both need an API key first, like every operation.',
].join('\n\n')

/**
 * The OpenAPI 3.1 document, generated from the TypeBox schemas of the routes registered after this (at the
 * root, so that it sees the routes of every scope).
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Pet Store API',
        version: '1.0.0',
        description: DESCRIPTION,
        // The repository has no published address yet: the contact names who answers for the API.
        contact: { name: 'Petstore contributors' },
        license: { name: 'MIT', identifier: 'MIT' },
      },
      tags: [
        { name: 'pets', description: 'The animals of the store.' },
        { name: 'account', description: "The calling key's own standing." },
        { name: 'store', description: 'Orders and the inventory (experimental).' },
      ],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description:
              'An API key: `ps_live_...` or `ps_test_...`. Its scope is `write` (every operation) or `read` ' +
              '(GET and HEAD only: an operation that writes says so in its description and answers a read ' +
              'key 403 `insufficient_scope`).',
          },
        },
      },
      security: [{ bearerAuth: [] }],
    },
    refResolver: {
      buildLocalReference: (json, _base, _fragment, index) => String(json.$id ?? `def-${index}`),
    },
    transform: ({ schema, url }) => ({ schema: withMediaExamples(schema), url }),
  })
}

/**
 * The document at /v1/openapi.json, and an interactive reference at /v1/docs whose assets are all served
 * from here (the page fetches nothing from other hosts), in the public scope. The document is rendered
 * once per process and base address (JSON and YAML), never per request: the docs plugin's own /json and
 * /yaml (a deep copy and a YAML rendering on every request) are answered from those renderings before
 * its handlers run.
 */
export async function serveOpenApi(app: FastifyInstance, config: Config): Promise<void> {
  const documents = createDocuments(app, config)
  const send = (request: FastifyRequest, reply: FastifyReply, format: 'json' | 'yaml') =>
    sendDocument(request, reply, documents(publicUrlOf(config, request)), format, baseAddressHeaders(config))
  // In a plugin of its own, so that this hook covers the page's static files too (uiHooks do not).
  await app.register(async (docs) => {
    docs.addHook('onRequest', (request, reply, done) =>
      whenWritable(reply, () => {
        const format = DOCS_DOCUMENTS[request.routeOptions.url ?? '']
        if (format) send(request, reply, format)
        else done()
      }),
    )
    await docs.register(swaggerUi, {
      routePrefix: '/v1/docs',
      theme: { title: 'Petstore API reference' },
      uiConfig: { deepLinking: true, displayRequestDuration: true },
    })
  })
  app.get(
    '/v1/openapi.json',
    { schema: { hide: true }, onRequest: (_request, reply, done) => whenWritable(reply, done) },
    (request, reply) => send(request, reply, 'json'),
  )
}

type ResponseSchemas = Record<string, { 'x-examples'?: unknown; description?: string; headers?: unknown }>

/**
 * A route's schema for the document only, with each response that has `x-examples` (the Error responses,
 * error.schemas.ts) written as JSON `content` carrying those examples. Such a response is a `$ref` to a
 * component, and the ref resolver keeps nothing beside a `$ref`; Fastify serializes from the route's own
 * schema, untouched.
 */
function withMediaExamples<T>(schema: T): T {
  const responses = (schema as { response?: ResponseSchemas } | undefined)?.response
  if (!responses) return schema
  const response = Object.fromEntries(
    Object.entries(responses).map(([status, { 'x-examples': examples, description, headers, ...body }]) => [
      status,
      examples === undefined
        ? responses[status]
        : { description, headers, content: { 'application/json': { schema: body, examples } } },
    ]),
  )
  return { ...schema, response }
}

/** The docs plugin's document routes, and the format each serves. */
const DOCS_DOCUMENTS: Readonly<Record<string, 'json' | 'yaml'>> = {
  '/v1/docs/json': 'json',
  '/v1/docs/yaml': 'yaml',
}

interface RenderedDocument {
  json: string
  yaml: string
  etag: string
}

/** Base addresses whose documents are kept; a Host that keeps changing costs a rendering, not memory. */
const DOCUMENTS_KEPT = 16

function createDocuments(app: FastifyInstance, config: Config) {
  const rendered = new Map<string, RenderedDocument>()
  return (baseUrl: string): RenderedDocument => {
    let document = rendered.get(baseUrl)
    if (!document) {
      const object = documentFor(app.swagger(), config, baseUrl)
      const json = JSON.stringify(object)
      document = { json, yaml: YAML.stringify(object), etag: `"${sha256(json).slice(0, 27)}"` }
      if (rendered.size >= DOCUMENTS_KEPT) rendered.clear()
      rendered.set(baseUrl, document)
      app.log.debug({ baseUrl }, 'OpenAPI document rendered')
    }
    return document
  }
}

/** A rendered document with its validators; a matching If-None-Match gets 304 and no body. */
function sendDocument(
  request: FastifyRequest,
  reply: FastifyReply,
  document: RenderedDocument,
  format: 'json' | 'yaml',
  vary: string | undefined,
): FastifyReply {
  reply.header('cache-control', 'no-cache').header('etag', document.etag)
  if (vary) reply.header('vary', vary)
  if (request.headers['if-none-match'] === document.etag) return reply.code(304).send()
  const type = format === 'json' ? 'application/json; charset=utf-8' : 'application/x-yaml'
  return reply.type(type).send(format === 'json' ? document.json : document.yaml)
}

/** The spec's two environments: their base addresses are `{base_url}` and `{staging_base_url}` there. */
const ENVIRONMENTS = [
  { description: 'Production', variable: 'base_url', setting: 'PETSTORE_PRODUCTION_URL' },
  { description: 'Staging', variable: 'staging_base_url', setting: 'PETSTORE_STAGING_URL' },
] as const

interface Server {
  url: string
  description: string
  variables?: Record<string, { default: string; description: string }>
}

/**
 * The document with its servers: this one first (so "Try it" calls it), then production and staging (CONTRACT
 * §9). An environment whose address is configured is listed at it; one that is not is listed as the spec
 * writes it, a URL template (`{base_url}`) whose variable the reader fills in, preset to this server.
 */
function documentFor(document: unknown, config: Config, baseUrl: string): Record<string, unknown> {
  const here: Server = { url: baseUrl, description: `This server (${config.env})` }
  const servers = [here]
  const configured = { base_url: config.productionUrl, staging_base_url: config.stagingUrl }
  for (const { description, variable, setting } of ENVIRONMENTS) {
    const url = configured[variable]
    if (url === undefined) {
      const help = `The ${description.toLowerCase()} base address, ending in /v1 (not configured: ${setting}).`
      servers.push({
        url: `{${variable}}`,
        description,
        variables: { [variable]: { default: baseUrl, description: help } },
      })
    } else if (url !== here.url) servers.push({ url, description })
    else here.description = description
  }
  const {
    paths = {},
    components,
    ...rest
  } = document as { paths?: Record<string, unknown>; components?: Components }
  return { ...rest, servers, paths: relativeToServers(paths), components: withTypedArrayItems(components) }
}

type Schema = { type?: string; items?: Schema; $ref?: string }
type Components = { schemas?: Record<string, Schema> }

/**
 * `Pets` and `Orders` are arrays of `$ref`s, which the docs page labels `array<any>` until a reader opens
 * them (Swagger UI infers a type only from the keywords it sees). Beside each such `$ref` the document
 * states the type of the schema it names (OpenAPI 3.1 allows keywords beside `$ref`), so they read
 * `array<object>` at once. The routes' own schemas, which validate and serialize, are not touched.
 */
function withTypedArrayItems(components: Components | undefined): Components | undefined {
  const schemas = components?.schemas
  if (!schemas) return components
  const typeOf = (ref: string) => schemas[ref.slice(ref.lastIndexOf('/') + 1)]?.type
  const typed = Object.entries(schemas).map(([name, schema]) => {
    const ref = schema.type === 'array' ? schema.items?.$ref : undefined
    const type = ref && typeOf(ref)
    return [name, type ? { ...schema, items: { ...schema.items, type } } : schema]
  })
  return { ...components, schemas: Object.fromEntries(typed) }
}

/**
 * The routes live under /v1, and every server's address ends in /v1 (as the spec's base addresses do),
 * so the document's paths are relative to it, as the spec writes them: `/pets`, `/pets/{petId}`.
 */
function relativeToServers(paths: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(paths).map(([path, item]) => [path.replace(/^\/v1(?=\/)/, ''), item]),
  )
}
