import { readFileSync } from 'node:fs'
import { describe, expect, test } from 'vitest'
import {
  ENV_EXAMPLE_PATH,
  README_PATH,
  renderEnvExample,
  renderReadme,
} from '../scripts/config-docs/render.js'
import { CONFIG_VARIABLES } from '../src/config.schema.js'

describe('the configuration docs are written from the schema', () => {
  test('.env.example is what `npm run config:docs` writes', () => {
    expect(readFileSync(ENV_EXAMPLE_PATH, 'utf8'), 'stale: run `npm run config:docs`').toBe(
      renderEnvExample(),
    )
  })

  test("the README's table is what `npm run config:docs` writes, one row per variable", () => {
    const readme = readFileSync(README_PATH, 'utf8')
    expect(readme, 'stale: run `npm run config:docs`').toBe(renderReadme(readme))
    for (const [name] of CONFIG_VARIABLES) expect(readme).toContain(`| \`${name}\` |`)
  })

  test('every variable has a meaning, and a default or what being unset means', () => {
    for (const [name, schema] of CONFIG_VARIABLES) {
      expect(schema.description, name).not.toBe('')
      expect(schema.default ?? schema['x-unset'], name).toBeDefined()
    }
  })
})
