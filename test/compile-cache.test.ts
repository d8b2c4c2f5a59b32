import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import nodeModule from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, test } from 'vitest'
import { runCli, spawnService, waitForLine } from './service-process.js'

/**
 * The service and the CLI turn on Node's module compile cache where Node has one (22.1 and later): what a
 * start compiled is in NODE_COMPILE_CACHE when the process ends. Node 20 has none, and nothing is written.
 */

const dir = mkdtempSync(join(tmpdir(), 'petstore-compile-cache-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const hasCache = typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === 'function'

/** Every file under `root`, at any depth. */
const filesUnder = (root: string): string[] =>
  existsSync(root)
    ? readdirSync(root, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => e.name)
    : []

test('npm start keeps what it compiled in NODE_COMPILE_CACHE (Node 22 and later)', async () => {
  const cache = join(dir, 'service')
  const service = await spawnService({
    DATABASE_URL: `sqlite:${join(dir, 'service.db')}`,
    NODE_COMPILE_CACHE: cache,
  })
  await waitForLine(service, /Server listening/, service.stdout)
  service.child.kill('SIGTERM')
  expect(await service.exited).toBe(0)
  if (hasCache) expect(filesUnder(cache).length).toBeGreaterThan(50)
  else expect(existsSync(cache)).toBe(false)
}, 30_000)

test('bin/petstore keeps what it compiled in NODE_COMPILE_CACHE (Node 22 and later)', async () => {
  const cache = join(dir, 'cli')
  const run = await runCli(['--version'], { NODE_COMPILE_CACHE: cache }, dir)
  expect(run.code).toBe(0)
  if (hasCache) expect(filesUnder(cache).length).toBeGreaterThan(5)
  else expect(existsSync(cache)).toBe(false)
})
