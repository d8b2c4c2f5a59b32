import { defineConfig } from 'vitest/config'

/**
 * `npm run test:browser` (which installs Debian's chromium when missing): the docs page, and the built
 * client, in a real headless browser driven by playwright-core. Writes test-artifacts/docs-page.png.
 */
export default defineConfig({
  test: {
    include: ['test/browser/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
