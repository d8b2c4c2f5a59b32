import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { publicUrlOf } from './public-url.js'

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
 * from other hosts).
 */
export async function registerOpenApi(app: FastifyInstance, config: Config): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Pet Store API', version: '1.0.0', description: DESCRIPTION },
      tags: [{ name: 'pets', description: 'The animals of the store.' }],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key: `ps_live_...` or `ps_test_...`.',
          },
        },
      },
      security: [{ bearerAuth: [] }],
    },
    refResolver: {
      buildLocalReference: (json, _base, _fragment, index) => String(json.$id ?? `def-${index}`),
    },
  })
  const withServers = (document: unknown, request: FastifyRequest) => documentFor(document, config, request)
  await app.register(swaggerUi, {
    routePrefix: '/v1/docs',
    uiConfig: { deepLinking: true, displayRequestDuration: true },
    transformSpecification: withServers,
  })
  app.get('/v1/openapi.json', { schema: { hide: true } }, async (request) =>
    withServers(app.swagger(), request),
  )
}

/** The document with its servers: this one first (so "Try it" calls it), then production and staging. */
function documentFor(document: unknown, config: Config, request: FastifyRequest): Record<string, unknown> {
  const here = { url: publicUrlOf(config, request), description: `This server (${config.env})` }
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
