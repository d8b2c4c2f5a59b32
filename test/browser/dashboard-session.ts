import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, expect } from 'vitest'
import { killService } from '../service-process.js'
import { launchChromium } from './chromium.js'
import { type Demo, startDemo, startReceiver, watchPage } from './dashboard-fixture.js'

export interface DashboardSession {
  demo: Demo
  receiver: Awaited<ReturnType<typeof startReceiver>>
  /** The page of the current test (from `freshPage`). */
  page: Page
  watch: Awaited<ReturnType<typeof watchPage>>
  /** A new browser context and page, `width` px wide; confirmation dialogs are accepted. */
  freshPage(width?: number): Promise<void>
  // biome-ignore lint/suspicious/noExplicitAny: the API's JSON, read field by field in assertions
  api(key: string, path: string, init?: RequestInit): Promise<any>
}

/**
 * Registers a suite's hooks: the real demo process (`npm run demo`) and chromium for the whole file, a
 * receiver for endpoints to point at, and after every test the check that the browser reported no CSP
 * violation and no console error. Returns the session the tests read (filled in by the hooks).
 */
export function useDashboardSession(): DashboardSession {
  let browser: Browser
  let context: BrowserContext | undefined
  const session = {
    freshPage: async (width = 1280) => {
      const opened = await browser.newContext({ viewport: { width, height: 900 } })
      context = opened
      session.page = await opened.newPage()
      session.page.on('dialog', (dialog) => void dialog.accept())
      session.watch = await watchPage(session.page)
    },
    api: async (key: string, path: string, init: RequestInit = {}) => {
      const response = await fetch(`${session.demo.origin}/v1${path}`, {
        ...init,
        headers: { authorization: `Bearer ${key}`, ...(init.body && { 'content-type': 'application/json' }) },
      })
      return response.json()
    },
  } as DashboardSession

  beforeAll(async () => {
    session.receiver = await startReceiver()
    session.demo = await startDemo()
    browser = await launchChromium()
  })

  afterAll(async () => {
    await browser?.close()
    if (session.demo) await killService(session.demo.service)
    session.receiver?.server.close()
  })

  afterEach(async () => {
    if (!context) return
    try {
      expect(await session.watch.violations()).toEqual([])
      expect(session.watch.errors).toEqual([])
    } finally {
      await context.close()
      context = undefined
    }
  })
  return session
}
