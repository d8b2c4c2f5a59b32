import type { FastifyInstance } from 'fastify'
import type { ApiKey } from '../api-keys/api-keys.repository.js'
import type { ApiKeyService } from '../api-keys/api-keys.service.js'
import { AppError } from '../errors.js'
import { isApiRequest } from './api-paths.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Under /v1/pets, as the router sees it: decided once, by the first hook. */
    apiRequest: boolean
    /** The caller's verified key on API paths; null elsewhere or when the key was not accepted. */
    apiKey: ApiKey | null
    /** Why the key was not accepted, thrown once the request has been counted. */
    authFailure: AppError | null
  }
}

/**
 * Bearer authentication for everything under /v1/pets, unknown methods and sub-paths included, in
 * two hooks around the rate limiter: identify the key (without failing), then require it. A revocation
 * takes effect on the next request (see the key lookup cache in api-keys.service.ts).
 */
export function registerKeyIdentification(app: FastifyInstance, apiKeys: ApiKeyService): void {
  app.decorateRequest('apiRequest', false)
  app.decorateRequest('apiKey', null)
  app.decorateRequest('authFailure', null)
  app.addHook('onRequest', async (request) => {
    request.apiRequest = isApiRequest(request)
    if (!request.apiRequest) return
    try {
      request.apiKey = await apiKeys.verifyApiKey(request.headers.authorization)
    } catch (error) {
      if (!(error instanceof AppError)) throw error
      request.authFailure = error
    }
  })
}

export function registerKeyRequirement(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (request.authFailure) throw request.authFailure
  })
}

/** The verified key of a request that passed the auth hooks. */
export function apiKeyOf(request: { apiKey: ApiKey | null }): ApiKey {
  if (!request.apiKey) throw new Error('route reached without a verified API key')
  return request.apiKey
}
