import { CONFIG_VARIABLES } from './config.schema.js'

/** Read by the CLI's `pets` commands (a client of the API), not by the service. */
const CLIENT_VARIABLES = ['PETSTORE_URL', 'PETSTORE_API_KEY']
const KNOWN = [...CONFIG_VARIABLES.map(([name]) => name), ...CLIENT_VARIABLES]
const PREFIX = 'PETSTORE_'

/**
 * CONTRACT §1: a `PETSTORE_*` variable nobody reads is most likely a typo, so each one gets a warning
 * naming the closest known variable (`PETSTORE_PORTT` → `PORT`, `PETSTORE_LOGLEVEL` → `LOG_LEVEL`).
 */
export function unknownVariableWarnings(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.keys(env)
    .filter((name) => name.startsWith(PREFIX) && !KNOWN.includes(name))
    .sort()
    .map((name) => `${name} is not a setting of petstore (ignored): did you mean ${closestKnown(name)}?`)
}

/** The known name nearest by edit distance, the `PETSTORE_` prefix aside on both sides. */
function closestKnown(name: string): string {
  const bare = (text: string) => (text.startsWith(PREFIX) ? text.slice(PREFIX.length) : text)
  let best = KNOWN[0] ?? ''
  let bestDistance = Number.POSITIVE_INFINITY
  for (const known of KNOWN) {
    const distance = editDistance(bare(name), bare(known))
    if (distance < bestDistance) [best, bestDistance] = [known, distance]
  }
  return best
}

/** Levenshtein distance: insertions, deletions and substitutions of one character each cost 1. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution)
    }
    previous = current
  }
  return previous[b.length] ?? 0
}
