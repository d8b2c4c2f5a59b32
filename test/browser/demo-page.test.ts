import { setTimeout as delay } from 'node:timers/promises'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { killService, type Service, spawnService } from '../service-process.js'
import { launchChromium } from './chromium.js'

/** `npm run demo` as a newcomer uses it: the printed key, in the docs page's Authorize and Try it out. */

let demo: Service | undefined
let browser: Browser | undefined

beforeAll(async () => {
  demo = await spawnService({ LOG_LEVEL: 'warn' }, ['bin/petstore', 'serve', '--demo'])
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  if (demo) await killService(demo)
})

async function printed(pattern: RegExp): Promise<string> {
  for (let waited = 0; waited < 20_000; waited += 50) {
    const found = pattern.exec(demo?.stderr() ?? '')?.[1]
    if (found) return found
    await delay(50)
  }
  throw new Error(`the demo printed no ${pattern}: ${demo?.stderr()}`)
}

test('"Try it out" on listPets with the printed key shows 200 and the seeded pets', async () => {
  const docs = await printed(/docs .*: (http\S+)/)
  const key = await printed(/test key .*: (ps_test_\S+)/)
  const page = await (browser as Browser).newPage({ viewport: { width: 1280, height: 900 } })
  expect((await page.goto(docs))?.status()).toBe(200)
  await page.waitForSelector('#operations-pets-listPets', { state: 'visible' })
  await page.click('.scheme-container .btn.authorize')
  await page.fill('.modal-ux .auth-container input', key)
  await page.click('.modal-ux .auth-btn-wrapper .btn.authorize')
  await page.click('.modal-ux .btn-done')
  const block = page.locator('#operations-pets-listPets')
  await block.locator('.opblock-summary-control').click()
  await block.locator('.try-out__btn').click()
  const api = docs.replace(/\/docs$/, '')
  const [response] = await Promise.all([
    page.waitForResponse((candidate) => candidate.url().startsWith(`${api}/pets`)),
    block.locator('.execute').click(),
  ])
  expect(response.status()).toBe(200)
  expect(((await response.json()) as unknown[]).length).toBeGreaterThan(0)
  await expect
    .poll(() => block.locator('.live-responses-table tbody .response-col_status').innerText())
    .toContain('200')
})
