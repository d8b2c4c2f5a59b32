import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.js'
import { VERSION } from '../version.js'
import { addVary } from './compressed.js'
import { baseAddressHeaders, publicUrlOf } from './public-url.js'

/** Where a visitor of `/` or `/v1` can go next. */
export const INDEX_PATHS = ['/', '/v1', '/v1/'] as const

/**
 * `GET /` and `GET /v1`: a small JSON index for a visitor who types the service's address, linking the
 * docs page, the OpenAPI document, the API and the health probes. Public like the docs (no key), and
 * limited per client IP with them (public-limit.ts).
 */
export function registerIndexRoute(app: FastifyInstance, config: Config): void {
  const vary = baseAddressHeaders(config)
  for (const path of INDEX_PATHS) {
    app.get(path, { schema: { hide: true } }, async (request, reply) => {
      const api = publicUrlOf(config, request)
      const origin = api.slice(0, -'/v1'.length)
      // Added to CORS's `Origin`, not in its place.
      if (vary) addVary(reply, vary)
      return {
        name: 'Petstore API',
        version: VERSION,
        links: {
          docs: `${api}/docs`,
          dashboard: `${origin}/dashboard`,
          openapi: `${api}/openapi.json`,
          api: `${api}/pets`,
          health: `${origin}/healthz`,
          readiness: `${origin}/readyz`,
        },
      }
    })
  }
}
