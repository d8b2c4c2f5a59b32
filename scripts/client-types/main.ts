/**
 * `npm run client:types` writes client/src/openapi.ts from the OpenAPI document the app serves;
 * `npm run client:types -- --check` only compares, and exits 1 when the committed file is stale.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { relative } from 'node:path'
import { CLIENT_TYPES_PATH, renderClientTypes } from './render.js'

const args = process.argv.slice(2)
const where = relative(process.cwd(), CLIENT_TYPES_PATH)

if (args.some((arg) => arg !== '--check')) {
  console.error('usage: npm run client:types [-- --check]')
  process.exitCode = 2
} else {
  const rendered = await renderClientTypes()
  if (!args.includes('--check')) {
    writeFileSync(CLIENT_TYPES_PATH, rendered)
    console.log(`wrote ${where}`)
  } else if (!existsSync(CLIENT_TYPES_PATH) || readFileSync(CLIENT_TYPES_PATH, 'utf8') !== rendered) {
    console.error(
      `${where} differs from the served OpenAPI document: run \`npm run client:types\` and commit it`,
    )
    process.exitCode = 1
  } else {
    console.log(`${where} matches the served OpenAPI document`)
  }
}
