import type { IncomingMessage } from 'node:http'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { AppError } from '../errors.js'

/**
 * The target the router sees, so that every request reaches a route or a not-found handler of its scope
 * and passes that scope's hooks (the guard under /v1): an absolute-form target (`http://host/v1/pets`) is
 * routed by its path, and a path whose percent-encoding does not decode is routed with each `%` escaped
 * (`/v1/pets/%E0` → `/v1/pets/%25E0`) instead of being refused by the router before any hook runs. The
 * refusal comes later, once the guard has counted the request (`refuseMalformedTargets`).
 */
export function routableTarget(request: IncomingMessage): string {
  const url = request.url ?? '/'
  const originForm = url.charCodeAt(0) === 47 ? url : absolutePathOf(url)
  if (!originForm.includes('%')) return originForm
  const end = pathEnd(originForm)
  const path = originForm.slice(0, end)
  return decodes(path) ? originForm : path.replaceAll('%', '%25') + originForm.slice(end)
}

/**
 * Refuses a request whose path does not percent-decode with 400, after the hooks of its scope ran (so
 * under /v1 it is counted and carries the rate-limit headers like any other; the guard answers the 400
 * rather than a 401 when such a request has no valid key).
 */
export function refuseMalformedTargets(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => done(malformedTargetError(request)))
}

/** The 400 of a request whose path did not percent-decode as sent; undefined for every other request. */
export function malformedTargetError(request: FastifyRequest): AppError | undefined {
  const sent = request.originalUrl
  if (sent === request.url || decodes(sent.slice(0, pathEnd(sent)))) return undefined
  return new AppError('invalid_request', 'the URL is malformed: check its percent-encoding')
}

function absolutePathOf(url: string): string {
  if (!URL.canParse(url)) return url
  const parsed = new URL(url)
  return parsed.pathname + parsed.search
}

function pathEnd(url: string): number {
  const end = url.search(/[?#]/)
  return end === -1 ? url.length : end
}

function decodes(path: string): boolean {
  try {
    decodeURIComponent(path)
    return true
  } catch {
    return false
  }
}
