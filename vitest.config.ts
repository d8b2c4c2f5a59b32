import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // These need real PostgreSQL / Redis servers (`npm run test:services` starts them) or chromium
    // (`npm run test:browser` installs it).
    exclude: ['test/services/**', 'test/browser/**', 'node_modules/**'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
})
