import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { CLIENT_TYPES_PATH, renderClientTypes } from '../../scripts/client-types/render.js'

describe('client/src/openapi.ts', () => {
  it('is what openapi-typescript makes of the OpenAPI document the app serves now', async () => {
    const committed = readFileSync(CLIENT_TYPES_PATH, 'utf8')
    expect(committed, 'stale: run `npm run client:types` and commit the result').toBe(
      await renderClientTypes(),
    )
  })
})
