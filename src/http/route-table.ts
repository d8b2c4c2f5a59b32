import type { FastifyInstance } from 'fastify'
import FindMyWay from 'find-my-way'

/** The methods a 405's Allow can list, in the order it lists them. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

const noop = () => {}

/**
 * The methods each path answers, read from the routes as the scope registers them (Fastify's onRoute
 * hook) into a router of the same kind as Fastify's: a route added anywhere in the scope is in `Allow` at
 * once, and no table must be kept in step by hand. Catch-all routes (CORS's `OPTIONS *`) answer every
 * path and are left out. Register it before the routes.
 */
export function trackAllowedMethods(scope: FastifyInstance): (target: string) => string[] {
  const router = FindMyWay()
  scope.addHook('onRoute', (route) => {
    if (route.url.includes('*')) return
    for (const method of [route.method].flat()) {
      if ((METHODS as readonly string[]).includes(method)) router.on(method as never, route.url, noop)
    }
  })
  return (target) => METHODS.filter((method) => router.find(method, target) !== null)
}
