import { readFileSync } from 'node:fs'
import { expect, it } from 'vitest'
import { MAX_USAGE_DAYS } from './api-keys/usage.routes.js'
import { FIRST_PAUSE_MS, LONGEST_PAUSE_MS } from './db/deadline.js'
import { READ_BUSY_TIMEOUT_MS } from './db/sqlite.js'
import { PURGE_INTERVAL_MS } from './deps.js'
import { MIN_COMPRESSED_BYTES } from './http/compressed.js'
import { BROTLI_QUALITY, GZIP_LEVEL } from './http/compression.js'
import { IDEMPOTENCY_TTL_MS } from './idempotency/idempotency.js'
import { DEFAULT_MAX_SUBJECTS, EVICTION_CANDIDATES } from './rate-limit/memory-store.js'

/**
 * The figures the folders' READMEs quote are the code's constants (the webhooks README has its own test,
 * src/webhooks/readme.test.ts): a constant that changes without its README fails here.
 */
const readme = (folder: string) =>
  readFileSync(new URL(`${folder}/README.md`, import.meta.url), 'utf8').replace(/\s+/g, ' ')
const n = (value: number) => value.toLocaleString('en')

it.each([
  ['api-keys', 'the days of GET /v1/usage', `newest day first, 1 to ${MAX_USAGE_DAYS} days`],
  ['db', 'the write retry pauses', `(${FIRST_PAUSE_MS} ms doubling to ${LONGEST_PAUSE_MS} ms)`],
  ['db', 'the read busy wait', `(${READ_BUSY_TIMEOUT_MS} ms busy wait at most`],
  ['http', 'the brotli and gzip settings', `(brotli quality ${BROTLI_QUALITY}, gzip level ${GZIP_LEVEL})`],
  ['http', 'the smallest body compressed', `a body under ${n(MIN_COMPRESSED_BYTES)} bytes`],
  ['idempotency', 'the retention', `kept ${IDEMPOTENCY_TTL_MS / 3_600_000} hours`],
  ['idempotency', 'the purge', `purged every ${PURGE_INTERVAL_MS / 60_000} minutes`],
  ['rate-limit', 'the memory store’s bound', `at most ${n(DEFAULT_MAX_SUBJECTS)} subjects by default`],
  ['rate-limit', 'the eviction candidates', `among the ${EVICTION_CANDIDATES} least recently seen`],
])('src/%s/README.md quotes the code: %s', (folder, _, phrase) => {
  expect(readme(folder)).toContain(phrase)
})
