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
    'does; an unknown path gets 404 `not_found`. Both need an API key under `/v1/pets`, like every operation.',
].join('\n\n')

/**
 * The OpenAPI 3.1 document, generated from the routes' TypeBox schemas, at /v1/openapi.json, and an
 * interactive reference at /v1/docs whose assets are all served from here (the page fetches nothing
 * from other hosts). The document is rendered once per process and base address (JSON and YAML), never
 * per request: the docs plugin's own /json and /yaml (a deep copy and a YAML rendering on every request)
 * are answered from those renderings before its handlers run.
 */
export async function registerOpenApi(app: FastifyInstance, config: Config): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Pet Store API', version: '1.0.0', description: DESCRIPTION },
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
              '(GET and HEAD only: an operation that writes lists `write` in its security requirement and ' +
              'answers a read key 403 `insufficient_scope`).',
          },
        },
      },
      security: [{ bearerAuth: [] }],
    },
    refResolver: {
      buildLocalReference: (json, _base, _fragment, index) => String(json.$id ?? `def-${index}`),
    },
  })
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
      uiConfig: { deepLinking: true, displayRequestDuration: true },
    })
  })
  app.get(
    '/v1/openapi.json',
    { schema: { hide: true }, onRequest: (_request, reply, done) => whenWritable(reply, done) },
    (request, reply) => send(request, reply, 'json'),
  )
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

/** The document with its servers: this one first (so "Try it" calls it), then production and staging. */
function documentFor(document: unknown, config: Config, baseUrl: string): Record<string, unknown> {
  const here = { url: baseUrl, description: `This server (${config.env})` }
  const servers = [here]
  for (const server of [
    { url: config.productionUrl, description: 'Production' },
    { url: config.stagingUrl, description: 'Staging' },
  ]) {
    if (server.url !== here.url) servers.push(server)
    else here.description = server.description
  }
  const { paths = {}, ...rest } = document as { paths?: Record<string, unknown> }
  return { ...rest, servers, paths: relativeToServers(paths) }
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
