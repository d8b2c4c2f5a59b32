import { defineConfig } from 'vitest/config'

/**
 * `npm run test:services` (which starts the servers and sets TEST_REDIS_URL and TEST_POSTGRES_URL):
 * the suites that need real servers, and the HTTP suites of `npm test` again, this time on PostgreSQL
 * and Redis (the webhook suites too). cli and process test the SQLite file and the bare process; the multi-instance suite runs
 * the process and the CLI on PostgreSQL.
 */
export default defineConfig({
  test: {
    include: [
      'test/services/**/*.test.ts',
      'test/*.test.ts',
      'test/webhooks/**/*.test.ts',
      // Where the spans go and when tracing is off are the same on any store: SQLite only (npm test).
      'test/tracing/traces.test.ts',
    ],
    // The CLI and the bare process (its drain too) on SQLite only; on PostgreSQL: multi-instance.test.ts.
    exclude: [
      'test/cli.test.ts',
      'test/cli-key-lifecycle.test.ts',
      'test/process.test.ts',
      'test/drain.test.ts',
      // A client of the API (the store behind it is the HTTP suites' concern), and the READMEs' walks, which
      // start their own SQLite services whatever the backend: running them again here only repeats them.
      'test/cli-pets.test.ts',
      'test/readme-run.test.ts',
      // Suites that name their own SQLite file or none (the CLI's first contact and webhook commands, the
      // startup errors, dev, the dispatcher's thread, the compile cache, the demo, the compressed assets)
      // and the docs' checks: the backend does not reach them.
      'test/cli-first-contact.test.ts',
      'test/cli-webhooks.test.ts',
      'test/startup-errors.test.ts',
      'test/dev.test.ts',
      'test/webhooks/thread.test.ts',
      'test/compile-cache.test.ts',
      'test/demo.test.ts',
      'test/compressed.test.ts',
      'test/config-docs.test.ts',
      'test/container-recipe.test.ts',
      'test/docs-figures.test.ts',
      'test/docs-references.test.ts',
      'test/readme-walkthrough.test.ts',
      'test/readmes-figures.test.ts',
      'node_modules/**',
    ],
    env: { PETSTORE_TEST_BACKEND: 'services' },
    // Two files at once, not vitest's default of one less than the cores (1 on a 2-core CI machine): most
    // suites wait on processes, sockets and timers, and the suite took 40% longer one file at a time.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 30_000,
  },
})
