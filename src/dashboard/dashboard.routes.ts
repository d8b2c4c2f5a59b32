import type { FastifyInstance, FastifyReply } from 'fastify'
import { AppError } from '../errors.js'
import { type BuiltDashboard, DASHBOARD_CSP, readBuiltDashboard } from './assets.js'

/** Hashed names never change content: a browser keeps them a year without asking again. */
const IMMUTABLE = 'public, max-age=31536000, immutable'

/** The page's own headers (CONTRACT §15); the common ones (request id, nosniff) come from reply.ts. */
function pageHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', DASHBOARD_CSP)
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
}

/**
 * `GET /dashboard` and its hashed assets under `/dashboard/` (CONTRACT §15), in the public scope: no key,
 * limited per client IP like the docs page. The page and its assets were built by `npm run build`
 * (scripts/build-dashboard.ts) and are read once here; without a build both answer 404 saying so.
 */
export function registerDashboardRoutes(app: FastifyInstance, built = readBuiltDashboard()): void {
  if (!built) app.log.warn('the partner dashboard is not built (npm run build): /dashboard answers 404')
  const require = (): BuiltDashboard => {
    if (!built)
      throw new AppError('not_found', 'the partner dashboard is not built on this server (npm run build)')
    return built
  }
  app.get('/dashboard', { schema: { hide: true } }, (_request, reply) =>
    pageHeaders(reply)
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8')
      .send(require().page),
  )
  app.get<{ Params: { file: string } }>('/dashboard/:file', { schema: { hide: true } }, (request, reply) => {
    const asset = require().assets.get(request.params.file)
    if (!asset) throw new AppError('not_found', 'the dashboard has no such file')
    return pageHeaders(reply).header('cache-control', IMMUTABLE).type(asset.contentType).send(asset.body)
  })
}
