import { createRequire } from 'node:module'

/** The service's version, from package.json (one level above both src/ and dist/). */
export const VERSION: string = createRequire(import.meta.url)('../package.json').version
