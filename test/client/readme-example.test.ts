import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, expect, test } from 'vitest'
import {
  issueUnlimitedKey,
  killService,
  ROOT,
  type Service,
  spawnService,
  waitUntilHealthy,
} from '../service-process.js'

/**
 * The client README's example, saved as example.mjs and run unchanged with `node` against the service as
 * `npm start` runs it: only PETSTORE_URL and PETSTORE_API_KEY are given, as the README says.
 */

let dir: string
let service: Service
let env: Record<string, string>

beforeAll(async () => {
  // Inside the project, so that `import '@petstore/client'` resolves as it does in a project that installed it.
  dir = mkdtempSync(join(ROOT, 'node_modules', '.client-readme-'))
  env = { DATABASE_URL: `sqlite:${join(dir, 'petstore.sqlite')}`, LOG_LEVEL: 'warn' }
  service = await spawnService(env)
  await waitUntilHealthy(service)
})
afterAll(async () => {
  if (service) await killService(service)
  rmSync(dir, { recursive: true, force: true })
})

test('the example runs as saved and prints the pets and the rate-limit headers', async () => {
  const readme = readFileSync(join(ROOT, 'client', 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('## Example'))
  const example = /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? ''
  expect(example).toContain("from '@petstore/client'")
  writeFileSync(join(dir, 'example.mjs'), example)
  const { key } = await issueUnlimitedKey(env, dir)
  const { stdout, stderr } = await promisify(execFile)(process.execPath, [join(dir, 'example.mjs')], {
    env: {
      PATH: process.env.PATH,
      PETSTORE_URL: `http://127.0.0.1:${service.port}/v1`,
      PETSTORE_API_KEY: key,
    },
    timeout: 30_000,
  })
  // The created pet is listed by pets.all; getPet(424242) is a not_found the example catches.
  expect(stdout).toMatch(/^\d+ Rex$/m)
  expect(stdout).toMatch(/limit: 1000000, remaining: \d+, reset: \d+/)
  // The deprecated getPet warns once, on stderr; nothing else goes wrong.
  expect(stderr).not.toMatch(/Error|ENOTFOUND/)
})
