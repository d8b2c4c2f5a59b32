import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createDeps } from '../../src/deps.js'

/** The generated types the client compiles against; committed, and checked against the server. */
export const CLIENT_TYPES_PATH = join(import.meta.dirname, '..', '..', 'client', 'src', 'openapi.ts')

/** The OpenAPI document exactly as the real app serves it, built on a throw-away SQLite file. */
export async function fetchServedDocument(): Promise<OpenAPI3> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-client-types-'))
  try {
    const config = loadConfig({ DATABASE_URL: `sqlite:${join(dir, 'petstore.sqlite')}`, LOG_LEVEL: 'silent' })
    const deps = await createDeps(config)
    try {
      const app = await buildApp(deps)
      const reply = await app.inject({ method: 'GET', url: '/v1/openapi.json' })
      await app.close()
      if (reply.statusCode !== 200) throw new Error(`GET /v1/openapi.json answered ${reply.statusCode}`)
      return reply.json()
    } finally {
      await deps.close()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The text of client/src/openapi.ts for the document the server serves now. */
export async function renderClientTypes(): Promise<string> {
  const ast = await openapiTS(await fetchServedDocument())
  return `${COMMENT_HEADER}${astToString(ast)}`
}
