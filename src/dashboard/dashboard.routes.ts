import type { FastifyInstance } from 'fastify'
import { AppError } from '../errors.js'
import { createStaticAsset, type StaticAsset, sendStaticAsset } from '../http/compressed.js'
import { type BuiltDashboard, DASHBOARD_CSP } from './assets.js'

/** Hashed names never change content: a browser keeps them a year without asking again. */
const IMMUTABLE = 'public, max-age=31536000, immutable'

/** The page's own headers (CONTRACT §15); the common ones (request id, nosniff) come from reply.ts. */
const PAGE_HEADERS = {
  'content-security-policy': DASHBOARD_CSP,
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
}

/**
 * `GET /dashboard` and its hashed assets under `/dashboard/` (CONTRACT §15), in the public scope: no key,
 * limited per client IP like the docs page. The page and its assets were built by `npm run build`
 * (scripts/build-dashboard.ts) and are read once here; each is compressed once, when it is first asked
 * for (http/compressed.ts: br or gzip as Accept-Encoding allows). Without a build both answer 404 saying so.
 */
export function registerDashboardRoutes(app: FastifyInstance, built: BuiltDashboard | undefined): void {
  if (!built) app.log.warn('the partner dashboard is not built (npm run build): /dashboard answers 404')
  const notBuilt = () =>
    new AppError('not_found', 'the partner dashboard is not built on this server (npm run build)')
  let page: StaticAsset | undefined
  const files = new Map<string, StaticAsset>()
  app.get('/dashboard', { schema: { hide: true } }, (request, reply) => {
    if (!built) throw notBuilt()
    // Made (and its compression started) on its first request: a process that never serves it never compresses it.
    page ??= createStaticAsset(built.page, {
      contentType: 'text/html; charset=utf-8',
      cacheControl: 'no-cache',
      headers: PAGE_HEADERS,
    })
    return sendStaticAsset(request, reply, page)
  })
  app.get<{ Params: { file: string } }>('/dashboard/:file', { schema: { hide: true } }, (request, reply) => {
    if (!built) throw notBuilt()
    const { file } = request.params
    let asset = files.get(file)
    if (!asset) {
      const found = built.assets.get(file)
      if (!found) throw new AppError('not_found', 'the dashboard has no such file')
      asset = createStaticAsset(found.body, {
        contentType: found.contentType,
        cacheControl: IMMUTABLE,
        headers: PAGE_HEADERS,
      })
      files.set(file, asset)
    }
    return sendStaticAsset(request, reply, asset)
  })
}
