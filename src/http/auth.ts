import type { FastifyInstance } from 'fastify'
import type { ApiKey } from '../api-keys/api-keys.repository.js'
import type { ApiKeyService } from '../api-keys/api-keys.service.js'
import { isApiPath, pathOf } from './api-paths.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller's verified key on every API path; null elsewhere. */
    apiKey: ApiKey | null
  }
}

/**
 * Bearer authentication for everything under /v1/pets, unknown methods and sub-paths included, so a
 * caller without a valid key learns nothing about the API. Revocation takes effect on the next request:
 * every request reads the key's row.
 */
export function registerBearerAuth(app: FastifyInstance, apiKeys: ApiKeyService): void {
  app.decorateRequest('apiKey', null)
  app.addHook('onRequest', async (request) => {
    if (!isApiPath(pathOf(request.url))) return
    request.apiKey = await apiKeys.verifyApiKey(request.headers.authorization)
  })
}

/** The verified key of a request that passed the auth hook. */
export function apiKeyOf(request: { apiKey: ApiKey | null }): ApiKey {
  if (!request.apiKey) throw new Error('route reached without a verified API key')
  return request.apiKey
}
