/** The API's own paths: auth, no-store and (later) rate limits apply to everything under them. */
export const API_PREFIX = '/v1/pets'

export function pathOf(url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}

export function isApiPath(path: string): boolean {
  return path === API_PREFIX || path.startsWith(`${API_PREFIX}/`)
}

/** Methods a known API path answers, for 405 and `Allow`; undefined for an unknown path. */
export function allowedMethods(path: string): string | undefined {
  if (path === API_PREFIX) return 'GET, HEAD, POST'
  const rest = path.slice(API_PREFIX.length + 1)
  if (path.startsWith(`${API_PREFIX}/`) && rest !== '' && !rest.includes('/')) return 'GET, HEAD'
  return undefined
}
