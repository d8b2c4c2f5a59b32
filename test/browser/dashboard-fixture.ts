import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { Page } from 'playwright-core'
import { expect } from 'vitest'
import { ROOT, type Service, spawnService, waitForLine } from '../service-process.js'

/** What test/browser/dashboard.test.ts drives: the real demo process, keys made by the CLI, a receiver. */

export const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url))

export interface Demo {
  service: Service
  origin: string
  /** The key `npm run demo` prints. */
  key: string
  databaseUrl: string
}

/** `petstore serve --demo`, as `npm run demo` starts it: its key, its dashboard, its database. */
export async function startDemo(): Promise<Demo> {
  const service = await spawnService({ LOG_LEVEL: 'info' }, ['bin/petstore', 'serve', '--demo'])
  const key = (await waitForLine(service, /test key .*: (ps_test_\S+)/, service.stderr))[1] ?? ''
  const dashboard =
    (await waitForLine(service, /dashboard .*: (http\S+)\/dashboard/, service.stderr))[1] ?? ''
  const database = (await waitForLine(service, /"database":"(sqlite:[^"]+)"/, service.stdout))[1] ?? ''
  return { service, origin: dashboard, key, databaseUrl: database }
}

/** `petstore keys <args> --json` on the demo's database (staging, as the demo runs): its JSON output. */
export async function keysCommand(demo: Demo, args: string[]): Promise<{ id: number; key: string }> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['bin/petstore', 'keys', ...args, '--json'],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH, DATABASE_URL: demo.databaseUrl, PETSTORE_ENV: 'staging' },
    },
  )
  return JSON.parse(stdout) as { id: number; key: string }
}

export interface Delivery {
  body: string
  headers: IncomingHttpHeaders
}

/** A partner's receiver on a loopback port: keeps every delivery and answers 204. */
export async function startReceiver(): Promise<{ url: string; deliveries: Delivery[]; server: Server }> {
  const deliveries: Delivery[] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      deliveries.push({ body: Buffer.concat(chunks).toString('utf8'), headers: request.headers })
      response.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}/hooks`, deliveries, server }
}

/** Waits until `find` returns something (deliveries arrive in the background). */
export async function eventually<T>(find: () => T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  for (let waited = 0; waited < timeoutMs; waited += 100) {
    const found = find()
    if (found !== undefined) return found
    await delay(100)
  }
  throw new Error(`timed out waiting for ${what}`)
}

/**
 * Records every Content-Security-Policy violation the browser reports in the page, from before its first
 * script runs (an init script is not subject to the page's CSP), and console errors.
 */
export async function watchPage(
  page: Page,
): Promise<{ violations: () => Promise<string[]>; errors: string[] }> {
  const errors: string[] = []
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text())
  })
  page.on('pageerror', (error) => errors.push(error.message))
  await page.addInitScript(
    "window.__csp = []; document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI))",
  )
  return { violations: () => page.evaluate('window.__csp ?? []') as Promise<string[]>, errors }
}

const AXE = readFileSync(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url), 'utf8')

/** axe-core's serious and critical violations on the page as it is now. */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  if (!(await page.evaluate('typeof axe !== "undefined"'))) await page.evaluate(AXE)
  return (await page.evaluate(
    `axe.run(document, { resultTypes: ['violations'] }).then((result) => result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => v.impact + ' ' + v.id + ': ' + v.help + ' (' + v.nodes.map((n) => n.target.join(' ')).join(', ') + ')'))`,
  )) as string[]
}

/** Saves a screenshot of a section (or the page) as test-artifacts/dashboard-<name>.png. */
export async function keepScreenshot(page: Page, name: string, selector?: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true })
  const path = `${ARTIFACTS}dashboard-${name}.png`
  if (selector) await page.locator(selector).screenshot({ path })
  else await page.screenshot({ path, fullPage: true })
}

/** Signs in on a fresh visit of /dashboard with `key`; resolves once the key section shows. */
export async function signIn(page: Page, origin: string, key: string): Promise<void> {
  await page.goto(`${origin}/dashboard`)
  await page.getByLabel('API key', { exact: true }).fill(key)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect.poll(() => page.locator('#key-title').count()).toBe(1)
}
