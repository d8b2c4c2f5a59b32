import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { expect, test } from 'vitest'

/**
 * Every README (the root's, the client's, each folder's under src/) and every page of docs/ names only
 * files and commands that exist: a path in backticks (`src/webhooks/lanes.ts`, `test/tracing/`) is a file
 * or folder of the repository, a file name alone (`lanes.ts`) is one somewhere in it, `npm run <name>`
 * is a script of package.json, and a call in backticks (`createFreshCache(…)`, `client.webhooks.redeliver(`)
 * names a function or method the repository's TypeScript defines. A rename that leaves a document behind
 * fails here.
 */

const tracked = execFileSync('git', ['ls-files'], { encoding: 'utf8' }).split('\n').filter(Boolean)
const documents = tracked.filter(
  (path) =>
    /^src\/.*README\.md$/.test(path) ||
    /^docs\/[^/]+\.md$/.test(path) ||
    path === 'README.md' ||
    path === 'client/README.md',
)
const basenames = new Set(tracked.map((path) => basename(path)))
const scripts = JSON.parse(readFileSync('package.json', 'utf8')).scripts as Record<string, string>

/** Names the documents use that are no file of ours on purpose, each for the reason given. */
const NOT_FILES = new Set([
  'openapi.json', // served at /v1/openapi.json, generated from the routes
  'example.mjs', // the client README asks the reader to save its example under this name
  'receiver.mjs', // the README asks the reader to save its webhook receiver under this name
  '.mjs',
  '.env', // the reader's own copy of .env.example
  'petstore.sqlite', // the default database file, made on first start
  'test-artifacts/', // the browser suite's screenshots, made by its first run (ignored by git)
])

/** What the repository's TypeScript defines: functions, constants, classes, types, and methods. */
const defined = new Set<string>()
for (const path of tracked.filter((file) => /\.ts$/.test(file))) {
  const code = readFileSync(path, 'utf8')
  for (const [, name = ''] of code.matchAll(
    /\b(?:function|const|let|class|interface|type)\s+([A-Za-z_$][\w$]*)/g,
  ))
    defined.add(name)
  for (const [, name = ''] of code.matchAll(/^\s+(?:async\s+)?([A-Za-z_$][\w$]*)\s*[(:<]/gm))
    defined.add(name)
}
/** Calls the documents show that are the platform's or PostgreSQL's, not ours. */
const NOT_OURS = new Set(['require', 'randomUUID', 'pg_current_snapshot'])

const PATH_LIKE = /^[\w.-]+(\/[\w.*-]+)*\/?$/
const FILE_EXTENSION = /\.(ts|md|sh|ya?ml|json|cfg|js|mjs|cjs)$/

function missingReferences(document: string): string[] {
  const text = readFileSync(document, 'utf8')
  const missing: string[] = []
  for (const [, token = ''] of text.matchAll(/`([^`\s]+)`/g)) {
    if (!PATH_LIKE.test(token) || NOT_FILES.has(token)) continue
    const folder = token.endsWith('/')
    if (!folder && !FILE_EXTENSION.test(token)) continue
    if (!token.includes('/') || (!folder && !token.slice(0, -1).includes('/'))) {
      if (!folder && !basenames.has(token)) missing.push(token)
      if (folder && !existsSync(token) && !existsSync(join(dirname(document), token))) missing.push(token)
      continue
    }
    const where = token.replace(/\*.*$/, '')
    const candidates = [where, join(dirname(document), where), join('src', where)]
    if (!candidates.some((candidate) => existsSync(candidate))) missing.push(token)
  }
  for (const [, script = ''] of text.matchAll(/npm run ([\w:-]*[\w-])/g)) {
    if (!(script in scripts)) missing.push(`npm run ${script}`)
  }
  for (const [, call = ''] of text.matchAll(/`([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\(/g)) {
    const name = call.split('.').at(-1) ?? ''
    if (!defined.has(name) && !NOT_OURS.has(name)) missing.push(`${call}(`)
  }
  return missing
}

test('the documents are found (a change of layout would make this test check nothing)', () => {
  expect(documents).toEqual(
    expect.arrayContaining(['README.md', 'docs/observability.md', 'src/webhooks/README.md']),
  )
  expect(documents.length).toBeGreaterThan(20)
})

test.each(documents)('%s names only files, folders, npm scripts and functions that exist', (document) => {
  expect(missingReferences(document)).toEqual([])
})
