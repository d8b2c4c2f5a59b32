import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { basename } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

/**
 * `npm run build` (dashboard part): bundles src/main.tsx and what it imports (Preact, uPlot, the typed
 * client, the styles) into content-hashed files under dist/public/dashboard/, and writes the page that loads
 * them and a manifest that src/dashboard/ serves from. Nothing is fetched from another host at run time.
 */
const root = fileURLToPath(new URL('..', import.meta.url))
const outdir = `${root}dist/public/dashboard`

rmSync(outdir, { recursive: true, force: true })
mkdirSync(outdir, { recursive: true })
const result = await build({
  entryPoints: { app: `${root}dashboard/src/main.tsx` },
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir,
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  metafile: true,
  legalComments: 'linked',
  logLevel: 'warning',
})

const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path))
const script = outputs.find((name) => name.endsWith('.js'))
const style = outputs.find((name) => name.endsWith('.css'))
if (!script || !style)
  throw new Error(`the dashboard bundle lacks a script or a style sheet: ${outputs.join(', ')}`)

const template = readFileSync(`${root}dashboard/index.html`, 'utf8')
const page = template
  .replace('{{script}}', `/dashboard/${script}`)
  .replace('{{style}}', `/dashboard/${style}`)
writeFileSync(`${outdir}/index.html`, page)
writeFileSync(
  `${outdir}/manifest.json`,
  `${JSON.stringify({ page: 'index.html', assets: outputs }, null, 2)}\n`,
)
