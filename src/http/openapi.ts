import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import swagger from '@fastify/swagger'
import swaggerUi, { type FastifySwaggerUiOptions } from '@fastify/swagger-ui'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { sendStaticAsset } from './compressed.js'
import { createDocsFiles, renderInitializer, UI_FOLDER } from './docs-files.js'
import { createDocuments, type RenderedDocument } from './openapi-document.js'
import { whenWritable } from './pipelining.js'
import { baseAddressHeaders, publicUrlOf } from './public-url.js'

const DESCRIPTION = [
  'Manages the animals of a pet store. Every operation needs an API key sent as `Authorization: Bearer <key>`.',
  '**Getting a key**: the operator of this service issues one (`petstore keys create --plan free`); to try ' +
    'the API at once, `npm run demo` starts a service with pets, an order and a printed test key. Here, ' +
    '**Authorize** with the key, then **Try it out** on any operation.',
  '**Limits**: each key has per-minute and per-day limits (its plan); every response says where it stands ' +
    '(`X-RateLimit-*`, `RateLimit`), a 429 says when to come back (`Retry-After`), and `GET /rate_limit` ' +
    'tells without counting.',
  '**Pages**: listings return up to `limit` items in ascending id order; the next page is the `Link: ' +
    'rel="next"` header, whose opaque `cursor` is passed back as it is.',
  'Errors share one body, `{code, message, status, requestId}`; each response lists the codes it can carry, ' +
    'and `requestId` is the `X-Request-Id` to quote when asking about it.',
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
        { name: 'account', description: "The calling key's own standing and its account's usage." },
        { name: 'store', description: 'Orders and the inventory (experimental).' },
        {
          name: 'webhooks',
          description:
            'Endpoints that receive signed events (Standard Webhooks), and their delivery log (experimental).',
        },
        {
          name: 'events',
          description: 'Changes of pets and orders, as delivered to webhooks (experimental).',
        },
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
 * The docs page (@fastify/swagger-ui). Every option the initializer script depends on is given, its defaults
 * included (the plugin's own logo, no OAuth settings), so that the script rendered from them here is the one
 * the plugin would serve (docs-files.ts).
 */
export const DOCS_PAGE = {
  routePrefix: '/v1/docs',
  // No top bar (neither the framework's logo nor a box offering the page's own copy of the document)
  // and no link to that copy under the title: the document's one address is /v1/openapi.json.
  theme: {
    title: 'Petstore API reference',
    css: [{ filename: 'petstore.css', content: '.swagger-ui .info hgroup.main > a { display: none; }' }],
  },
  uiConfig: { deepLinking: true, displayRequestDuration: true, layout: 'BaseLayout' },
  initOAuth: {},
  logo: { type: 'image/svg+xml', content: readFileSync(join(UI_FOLDER, 'logo.svg')) },
} satisfies FastifySwaggerUiOptions

/**
 * The document at /v1/openapi.json, and an interactive reference at /v1/docs whose assets are all served
 * from here (the page fetches nothing from other hosts), in the public scope. The document is rendered
 * once per process (openapi-document.ts), never per request or per base address: the docs plugin's own
 * /json and /yaml (a deep copy and a YAML rendering on every request) are answered from that rendering
 * before its handlers run, and so are the page's files (docs-files.ts), compressed once (compressed.ts).
 */
export async function serveOpenApi(app: FastifyInstance, config: Config): Promise<void> {
  const documents = createDocuments(
    () => app.swagger(),
    config,
    (rendering) => app.log.debug(rendering, 'OpenAPI document rendered'),
  )
  const send = (request: FastifyRequest, reply: FastifyReply, format: 'json' | 'yaml') =>
    sendDocument(request, reply, documents(publicUrlOf(config, request)), format, baseAddressHeaders(config))
  const sendDocsFile = createDocsFiles(DOCS_PAGE.routePrefix, renderInitializer(DOCS_PAGE))
  // In a plugin of its own, so that this hook covers the page's static files too (uiHooks do not).
  await app.register(async (docs) => {
    docs.addHook('onRequest', (request, reply, done) =>
      whenWritable(reply, () => {
        const format = DOCS_DOCUMENTS[request.routeOptions.url ?? '']
        if (format) send(request, reply, format)
        else sendDocsFile(request, reply, done)
      }),
    )
    await docs.register(swaggerUi, DOCS_PAGE)
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

/** A rendered document, compressed as the client accepts; a matching If-None-Match gets 304 and no body. */
function sendDocument(
  request: FastifyRequest,
  reply: FastifyReply,
  document: RenderedDocument,
  format: 'json' | 'yaml',
  vary: string | undefined,
): FastifyReply {
  const { prefix, suffix } = format === 'json' ? document.json() : document.yaml()
  const asset = prefix.withSuffix(suffix, document.etag, {
    contentType: format === 'json' ? 'application/json; charset=utf-8' : 'application/x-yaml',
    cacheControl: 'no-cache',
    headers: vary ? { vary } : {},
  })
  return sendStaticAsset(request, reply, asset)
}
