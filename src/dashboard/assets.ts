import { existsSync, readFileSync } from 'node:fs'

/** Where `npm run build` (scripts/build-dashboard.ts) writes the page; the same from src/ and from dist/. */
export const BUILT_DASHBOARD = new URL('../../dist/public/dashboard/', import.meta.url)

/** The page's Content-Security-Policy (CONTRACT §15): nothing inline, nothing from another origin. */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

export interface BuiltAsset {
  /** The file's name under /dashboard/: content-hashed (`app-C4ZSZ7UJ.js`). */
  name: string
  contentType: string
  body: Buffer
}

export interface BuiltDashboard {
  page: Buffer
  assets: Map<string, BuiltAsset>
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
}

/** The built page and its hashed assets, read once; undefined when the dashboard was not built. */
export function readBuiltDashboard(folder: URL = BUILT_DASHBOARD): BuiltDashboard | undefined {
  const manifestFile = new URL('manifest.json', folder)
  if (!existsSync(manifestFile)) return undefined
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as { page: string; assets: string[] }
  const assets = new Map<string, BuiltAsset>()
  for (const name of manifest.assets) {
    const contentType = CONTENT_TYPES[name.slice(name.lastIndexOf('.') + 1)]
    if (!contentType) throw new Error(`the dashboard build wrote ${name}, a kind of file it does not serve`)
    assets.set(name, { name, contentType, body: readFileSync(new URL(name, folder)) })
  }
  return { page: readFileSync(new URL(manifest.page, folder)), assets }
}
