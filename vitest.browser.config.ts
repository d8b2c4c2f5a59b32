import { defineConfig } from 'vitest/config'

/**
 * `npm run test:browser` (which installs Debian's chromium when missing): the docs page, the built client
 * and the partner dashboard, in a real headless browser driven by playwright-core. Writes screenshots to
 * test-artifacts/ (docs-page.png, dashboard-*.png).
 */
export default defineConfig({
  test: {
    include: ['test/browser/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
