import { existsSync, readFileSync } from 'node:fs'
import { expect, test } from 'vitest'

/**
 * The "follow a request" walkthrough of src/http/README.md is a promise (STYLE: "follow a request" lists are
 * derived or checked): the files it names exist, it counts them right, and every src/http/ module app.ts
 * imports is either on the path it describes or named below as off it.
 */

/** app.ts's src/http/ modules that a listPets request does not pass through, and why. */
const OFF_THE_PATH: Record<string, string> = {
  'src/http/client-error.ts': "Node's clientError: bytes that never became a request",
  'src/http/error.schemas.ts': 'schemas of the Error body, for validation and the document',
  'src/http/error-handler.ts': 'only requests that fail',
  'src/http/health.ts': 'the probes',
  'src/http/json-body.ts': 'request bodies',
  'src/http/openapi.ts': 'the public scope',
  'src/http/serializers.ts': "compiled at start; a warm page's JSON was written by them once, on its miss",
  'src/http/trust-proxy.ts': 'configuration, read once at start',
}

const readme = readFileSync('src/http/README.md', 'utf8')
const walkthrough = readme.slice(
  readme.indexOf('**Follow a warm listPets request**'),
  readme.indexOf('**Secrets redacted'),
)
const named = new Set([...walkthrough.matchAll(/`(src\/[\w/.-]+\.ts)`/g)].map((match) => match[1] as string))

test('every file the walkthrough names exists, and it says how many there are', () => {
  expect(named.size).toBeGreaterThan(10)
  for (const file of named) expect(existsSync(file), file).toBe(true)
  expect(walkthrough).toContain(`${named.size} files`)
})

test('every src/http/ module app.ts imports is on the walkthrough, or off the path for a reason', () => {
  const imported = [...readFileSync('src/app.ts', 'utf8').matchAll(/from '\.\/(http\/[\w.-]+)\.js'/g)].map(
    (match) => `src/${match[1]}.ts`,
  )
  expect(imported.length).toBeGreaterThan(10)
  for (const file of imported) {
    expect(
      named.has(file) || file in OFF_THE_PATH,
      `${file} is neither on the walkthrough nor off the path`,
    ).toBe(true)
  }
})
