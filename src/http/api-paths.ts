import type { FastifyRequest } from 'fastify'

/** The API's own paths: auth, no-store and rate limits apply to everything under them. */
export const API_PREFIX = '/v1/pets'
/** The caller's own standing (CONTRACT §10): authenticated like the API, counted against nothing. */
export const STANDING_PATH = '/v1/rate_limit'
/** Store orders and the inventory (CONTRACT §11). */
export const STORE_PREFIX = '/v1/store'

/**
 * Whether a request is an API request, decided the way the router decides: by the route it matched,
 * or, for an unmatched request, by its decoded path (so `/v1/%70ets` or an absolute-form target is an
 * API request too, and cannot skip authentication).
 */
export function isApiRequest(request: FastifyRequest): boolean {
  const route = request.routeOptions.url
  // `*` is the CORS plugin's catch-all OPTIONS route: as good as unmatched.
  return route === undefined || route === '*' ? isApiPath(decodedPathOf(request.url)) : isApiPath(route)
}

export function isApiPath(path: string): boolean {
  return (
    path === API_PREFIX ||
    path.startsWith(`${API_PREFIX}/`) ||
    path === STANDING_PATH ||
    path.startsWith(`${STORE_PREFIX}/`)
  )
}

/** The path of a request target, without query or fragment, percent-decoded where that is valid. */
export function decodedPathOf(target: string): string {
  let path = target.startsWith('/') ? target : URL.canParse(target) ? new URL(target).pathname : target
  path = path.split(/[?#]/, 1)[0] ?? ''
  try {
    return decodeURIComponent(path)
  } catch {
    return path
  }
}

/** Methods a known API path answers, for 405 and `Allow`; undefined for an unknown path. */
export function allowedMethods(path: string): string | undefined {
  if (path === API_PREFIX) return 'GET, HEAD, POST'
  if (path === STANDING_PATH || path === `${STORE_PREFIX}/inventory`) return 'GET, HEAD'
  if (path === `${STORE_PREFIX}/orders`) return 'GET, HEAD, POST'
  const order = path.slice(`${STORE_PREFIX}/orders/`.length)
  if (path.startsWith(`${STORE_PREFIX}/orders/`) && order !== '' && !order.includes('/'))
    return 'GET, HEAD, PATCH'
  const rest = path.slice(API_PREFIX.length + 1)
  if (path.startsWith(`${API_PREFIX}/`) && rest !== '' && !rest.includes('/'))
    return 'GET, HEAD, PATCH, DELETE'
  return undefined
}
