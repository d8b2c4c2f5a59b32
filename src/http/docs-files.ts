import { readdirSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, extname, join } from 'node:path'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { createStaticAsset, type StaticAsset, sendStaticAsset } from './compressed.js'

const require = createRequire(import.meta.url)

/** The folder @fastify/swagger-ui serves the page's files from, under `<prefix>/static/`. */
export const UI_FOLDER = join(dirname(require.resolve('@fastify/swagger-ui/package.json')), 'static')

/**
 * The initializer script @fastify/swagger-ui serves for these options, from the plugin's own renderer
 * (test/docs-files.test.ts compares the two): it is built once, when the plugin is registered.
 */
export function renderInitializer(options: object): string {
  const render = require('@fastify/swagger-ui/lib/swagger-initializer.js') as (options: object) => string
  return render(options)
}

/** The types @fastify/static gives these files; a file of any other type is left to it. */
const TYPES: Readonly<Record<string, string>> = {
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.js': 'application/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
}

/** As @fastify/static sends them: the names carry no hash of the content, so a cache must revalidate. */
const CACHE_CONTROL = 'public, max-age=0'

/**
 * The docs page's files, sent by compressed.ts rather than by the docs plugin: each file of swagger-ui's
 * folder (read, and compressed, when first asked for: a process that never serves the page never pays for
 * it) and the plugin's initializer script, `initializer`. A request with `Range` is left to the plugin's
 * file server, which answers ranges of the file as it is (206, or its own 416).
 */
export function createDocsFiles(prefix: string, initializer: string) {
  const files = new Map<string, Promise<StaticAsset> | undefined>(
    readdirSync(UI_FOLDER)
      .filter((name) => TYPES[extname(name)] !== undefined)
      .map((name) => [name, undefined]),
  )
  let initializerAsset: StaticAsset | undefined

  function fileAsset(name: string): Promise<StaticAsset> {
    let asset = files.get(name)
    if (!asset) {
      const contentType = TYPES[extname(name)] as string
      asset = readFile(join(UI_FOLDER, name)).then((body) =>
        createStaticAsset(body, { contentType, cacheControl: CACHE_CONTROL }),
      )
      // A file that could not be read is tried again next time (the file server answers meanwhile).
      asset.catch(() => files.set(name, undefined))
      files.set(name, asset)
    }
    return asset
  }

  /** Sends the file `request` asks for, or calls `next` to leave the request to the docs plugin. */
  return function sendDocsFile(request: FastifyRequest, reply: FastifyReply, next: () => void): void {
    const route = request.routeOptions.url
    if (route === `${prefix}/static/swagger-initializer.js`) {
      initializerAsset ??= createStaticAsset(initializer, {
        contentType: TYPES['.js'] as string,
        cacheControl: CACHE_CONTROL,
      })
      sendStaticAsset(request, reply, initializerAsset)
      return
    }
    const name = (request.params as { '*'?: string })['*'] ?? ''
    if (route === `${prefix}/static/*` && files.has(name) && request.headers.range === undefined) {
      fileAsset(name).then(
        (asset) => sendStaticAsset(request, reply, asset),
        () => next(),
      )
    } else next()
  }
}
