/**
 * `npm run config:docs` writes .env.example and the README's table of variables from the config schema;
 * `npm test` fails while either differs from what this would write.
 */
import { writeFileSync } from 'node:fs'
import { ENV_EXAMPLE_PATH, README_PATH, renderEnvExample, renderReadme } from './render.js'

writeFileSync(ENV_EXAMPLE_PATH, renderEnvExample())
writeFileSync(README_PATH, renderReadme())
console.log(`wrote ${ENV_EXAMPLE_PATH} and the table in ${README_PATH}`)
