import { readFileSync } from 'node:fs'
import { expect, it } from 'vitest'
import { RANDOM_BYTES } from './api-keys/api-keys.format.js'
import { limitsFor } from './api-keys/api-keys.plans.js'
import { USAGE_FLUSH_MS } from './api-keys/usage.js'
import { MAX_USAGE_DAYS } from './api-keys/usage.routes.js'
import { FIRST_PAUSE_MS, LONGEST_PAUSE_MS } from './db/deadline.js'
import { READ_BUSY_TIMEOUT_MS } from './db/sqlite.js'
import { PURGE_INTERVAL_MS } from './deps.js'
import { MIN_COMPRESSED_BYTES } from './http/compressed.js'
import { BROTLI_QUALITY, GZIP_LEVEL } from './http/compression.js'
import { IDLE_GRACE_MS } from './http/drain.js'
import { IDEMPOTENCY_TTL_MS } from './idempotency/idempotency.js'
import { FOLD_BATCH } from './orders/inventory.repository.js'
import { COMPACT_FROM_ROWS, COMPACT_INTERVAL_MS } from './orders/inventory.service.js'
import { PAGE_CACHE_ENTRIES, PET_CACHE_ENTRIES } from './pets/pets.service.js'
import { DEFAULT_MAX_SUBJECTS, EVICTION_CANDIDATES } from './rate-limit/memory-store.js'

/**
 * The figures the folders' READMEs quote are the code's constants (the webhooks README has its own test,
 * src/webhooks/readme.test.ts; the pages of docs/ and the root and client READMEs are checked by
 * test/docs-figures.test.ts and test/readmes-figures.test.ts): a constant that changes without its
 * README fails here.
 */
const readme = (folder: string) =>
  readFileSync(new URL(`${folder}/README.md`, import.meta.url), 'utf8').replace(/\s+/g, ' ')
const n = (value: number) => value.toLocaleString('en')

it.each([
  [
    'api-keys',
    'the key’s length',
    `${(RANDOM_BYTES * 4) / 3} base64url characters (${RANDOM_BYTES * 8} random bits)`,
  ],
  ['api-keys', 'the usage flush', `every ${USAGE_FLUSH_MS / 1000} s, and at shutdown`],
  ['api-keys', 'the days of GET /v1/usage', `newest day first, 1 to ${MAX_USAGE_DAYS} days`],
  ['db', 'the write retry pauses', `(${FIRST_PAUSE_MS} ms doubling to ${LONGEST_PAUSE_MS} ms)`],
  ['db', 'the read busy wait', `(${READ_BUSY_TIMEOUT_MS} ms busy wait at most`],
  ['http', 'the brotli and gzip settings', `(brotli quality ${BROTLI_QUALITY}, gzip level ${GZIP_LEVEL})`],
  ['http', 'the smallest body compressed', `a body under ${n(MIN_COMPRESSED_BYTES)} bytes`],
  ['http', 'the drain’s idle grace', `connections idle for ${IDLE_GRACE_MS / 1000} s more are closed`],
  ['idempotency', 'the retention', `kept ${IDEMPOTENCY_TTL_MS / 3_600_000} hours`],
  ['idempotency', 'the purge', `purged every ${PURGE_INTERVAL_MS / 60_000} minutes`],
  [
    'orders',
    'the inventory’s folding',
    `${COMPACT_INTERVAL_MS === 1000 ? 'Every second' : `Every ${COMPACT_INTERVAL_MS} ms`} each instance folds ` +
      `the rows into one per status if there are ${COMPACT_FROM_ROWS} or more`,
  ],
  ['orders', 'the folding’s batches', `in batches of ${n(FOLD_BATCH)} rows`],
  ['pets', 'the pages kept', `(by limit, status and cursor, at most ${n(PAGE_CACHE_ENTRIES)})`],
  ['pets', 'the pets kept', `getPet keeps up to ${n(PET_CACHE_ENTRIES)} pets`],
  ['rate-limit', 'the Business day', `(${n(limitsFor('business').perDay)} a day for Business)`],
  ['rate-limit', 'the memory store’s bound', `at most ${n(DEFAULT_MAX_SUBJECTS)} subjects by default`],
  ['rate-limit', 'the eviction candidates', `among the ${EVICTION_CANDIDATES} least recently seen`],
  ['rate-limit', 'when none qualifies', `if none of the ${EVICTION_CANDIDATES} qualifies`],
  [
    'rate-limit',
    'evicting a limited subject',
    `only when ${EVICTION_CANDIDATES} limited subjects are the oldest`,
  ],
])('src/%s/README.md quotes the code: %s', (folder, _, phrase) => {
  expect(readme(folder)).toContain(phrase)
})
