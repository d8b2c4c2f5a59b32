import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { build, type Plugin } from 'esbuild'

/**
 * `npm run build` (CLI part): bundles dist/cli/main.js and what its commands import into one file,
 * dist/cli/bundle.js, which bin/petstore runs for every command but `serve`. Node loads one file instead of
 * about a thousand modules (TypeBox, Kysely, the project's own), which was most of a command's time on
 * Node 20. `serve` (and the demo) import dist/start.js as `npm start` does: it stays outside the bundle,
 * with the database drivers, which load native code or are needed only on PostgreSQL.
 */
const root = fileURLToPath(new URL('..', import.meta.url))
const { version } = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { version: string }

/** src/version.ts reads package.json from beside dist/ when it runs; in the bundle the version is written in. */
const versionInline: Plugin = {
  name: 'version-inline',
  setup(build) {
    build.onLoad({ filter: /[\\/]dist[\\/]version\.js$/ }, () => ({
      contents: `export const VERSION = ${JSON.stringify(version)}`,
      loader: 'js',
    }))
  },
}

await build({
  entryPoints: [`${root}dist/cli/main.js`],
  outfile: `${root}dist/cli/bundle.js`,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['better-sqlite3', 'pg', 'ioredis', '../start.js', '../demo.js'],
  // The CommonJS packages inside (pino, prom-client) call require: give the ES module one.
  banner: {
    js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
  },
  plugins: [versionInline],
  logLevel: 'warning',
})
