import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // These need real PostgreSQL / Redis servers (`npm run test:services` starts them) or chromium
    // (`npm run test:browser` installs it).
    exclude: ['test/services/**', 'test/browser/**', 'node_modules/**'],
    // Two files at once, not vitest's default of one less than the cores (1 on a 2-core CI machine): most
    // suites wait on processes, sockets and timers, and the suite took 40% longer one file at a time.
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
})
