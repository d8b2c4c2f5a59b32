import { defineConfig } from 'vitest/config'

/** The suites that need real servers; `npm run test:services` starts them and sets TEST_REDIS_URL. */
export default defineConfig({
  test: {
    include: ['test/services/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 30_000,
  },
})
