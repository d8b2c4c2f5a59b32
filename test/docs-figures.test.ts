import { maxHeaderSize } from 'node:http'
import { expect, it } from 'vitest'
import { RANDOM_BYTES } from '../src/api-keys/api-keys.format.js'
import { limitsFor } from '../src/api-keys/api-keys.plans.js'
import { USAGE_FLUSH_MS } from '../src/api-keys/usage.js'
import { DEFAULT_USAGE_DAYS, MAX_USAGE_DAYS } from '../src/api-keys/usage.routes.js'
import { DEFAULT_URL } from '../src/cli/pets.js'
import { READY_TIMEOUT_MS } from '../src/deps.js'
import { UNAVAILABLE_RETRY_AFTER_S } from '../src/errors.js'
import { BROTLI_QUALITY } from '../src/http/compression.js'
import { IDLE_GRACE_MS } from '../src/http/drain.js'
import { BODY_LIMIT_BYTES } from '../src/http/error.schemas.js'
import { MAX_REQUEST_ID_LENGTH } from '../src/http/request-context.js'
import { BUFFER_BYTES, FLUSH_INTERVAL_MS } from '../src/logger.js'
import { COMPACT_FROM_ROWS, COMPACT_INTERVAL_MS } from '../src/orders/inventory.service.js'
import { GET_PET_DEPRECATED_AT, GET_PET_SUNSET_AT } from '../src/pets/pets.deprecation.js'
import { MISSES_BEFORE_SKIPPING, PROBE_INTERVAL_MS } from '../src/rate-limit/fallback-store.js'
import { STARTUP_WAIT_MS } from '../src/rate-limit/redis-store.js'
import { MAX_IN_FLIGHT_PER_ENDPOINT } from '../src/webhooks/attempts.repository.js'
import { BUSY_MS, POLL_MS } from '../src/webhooks/dispatcher.js'
import { DISPATCHER_POOL_SIZE } from '../src/webhooks/dispatcher-thread.js'
import { FAN_OUT_AHEAD } from '../src/webhooks/fan-out.js'
import { QUEUE_SIZE } from '../src/webhooks/lane.js'
import { defaultOf, documentText, n, numberDefault, second } from './figures.js'

/**
 * The figures the pages of docs/ quote are the code's constants and the configuration's defaults (the
 * root README and the client's: readmes-figures.test.ts; the folders' READMEs: src/readme-figures.test.ts).
 * A constant that changes without the page that quotes it fails here. Benchmark results, dated figures
 * and examples are not constants and are not checked.
 */

const free = limitsFor('free')
const pro = limitsFor('pro')
const business = limitsFor('business')
/** A day as the pages write it: `1 January 2026`. */
const dayOf = (ms: number) =>
  new Date(ms).toLocaleDateString('en-GB', {
    day: 'numeric',
    month: 'long',
    year: 'numeric',
    timeZone: 'UTC',
  })
const seconds = (name: Parameters<typeof numberDefault>[0]) => numberDefault(name) / 1_000

it.each([
  [
    'choices',
    'the documentation’s limit',
    `(\`PETSTORE_PUBLIC_PER_MINUTE\`, ${defaultOf('PETSTORE_PUBLIC_PER_MINUTE')})`,
  ],
  [
    'choices',
    'the deprecation instant',
    `${dayOf(GET_PET_DEPRECATED_AT)} (\`@${GET_PET_DEPRECATED_AT / 1_000}\`)`,
  ],
  [
    'choices',
    'the log’s buffer',
    `written in chunks of ${BUFFER_BYTES / 1_024} KiB and at least once a ${second(FLUSH_INTERVAL_MS)}`,
  ],
  ['choices', 'what a SIGKILL loses', `loses at most the last ${second(FLUSH_INTERVAL_MS)} of lines`],
  ['choices', 'the database deadline', `\`PETSTORE_DB_TIMEOUT_MS\` (${seconds('PETSTORE_DB_TIMEOUT_MS')} s)`],
  [
    'choices',
    'the 503’s Retry-After',
    `503 \`unavailable\` with \`Retry-After: ${UNAVAILABLE_RETRY_AFTER_S}\``,
  ],
  [
    'choices',
    'the inventory’s folding',
    `every ${second(COMPACT_INTERVAL_MS)} once there are ${COMPACT_FROM_ROWS} or more`,
  ],
  ['cli', 'the key’s random bits', `with ${RANDOM_BYTES * 8} random bits`],
  ['cli', 'the usage flush', `added to the database every ${USAGE_FLUSH_MS / 1_000} seconds and at shutdown`],
  ['cli', 'what a crash loses of usage', `at most its last ${USAGE_FLUSH_MS / 1_000} seconds of counts`],
  [
    'cli',
    'the days of GET /v1/usage',
    `1 to ${MAX_USAGE_DAYS} days, default ${DEFAULT_USAGE_DAYS}, newest day first`,
  ],
  ['cli', 'the pets commands’ address', `default \`${DEFAULT_URL}\``],
  ['headers', 'the deprecation instant', `| \`Deprecation: @${GET_PET_DEPRECATED_AT / 1_000}\` | getPet |`],
  ['headers', 'the deprecation day', `since that Unix time (${dayOf(GET_PET_DEPRECATED_AT)})`],
  ['headers', 'the sunset', `| \`Sunset: ${new Date(GET_PET_SUNSET_AT).toUTCString()}\` | getPet |`],
  ['headers', 'the longest request id', `letters, digits, \`._:-\`, up to ${MAX_REQUEST_ID_LENGTH}`],
  [
    'observability',
    'the export interval',
    `| \`OTEL_BSP_SCHEDULE_DELAY\` | milliseconds between two exports (${defaultOf('OTEL_BSP_SCHEDULE_DELAY')}) |`,
  ],
  [
    'performance',
    'the log’s buffer',
    `${BUFFER_BYTES / 1_024} KiB chunks at least once a ${second(FLUSH_INTERVAL_MS)}`,
  ],
  ['performance', 'the fan-out gate', `stopped while more than 2,000 (now ${n(FAN_OUT_AHEAD)}) attempts`],
  ['performance', 'the busy step', `(write down, fan out, claim) every ${BUSY_MS} ms while busy`],
  ['performance', 'the idle poll', `Polling every ${POLL_MS} ms is the whole lag`],
  ['performance', 'an endpoint’s places', `as fast as its ${MAX_IN_FLIGHT_PER_ENDPOINT} places`],
  ['performance', 'a lane’s queue', `queues of 250 instead of ${QUEUE_SIZE}`],
  ['performance', 'the brotli quality', `brotli (quality ${BROTLI_QUALITY}, one body at a time)`],
  ['rate-limits', 'the Free plan', `| Free | ${n(free.perMinute)} | ${n(free.perDay)} |`],
  ['rate-limits', 'the Pro plan', `| Pro | ${n(pro.perMinute)} | ${n(pro.perDay)} |`],
  ['rate-limits', 'the Business plan', `| Business | ${n(business.perMinute)} | ${n(business.perDay)} |`],
  ['rate-limits', 'the refusal’s message', `("per-minute limit of ${free.perMinute} requests reached")`],
  [
    'rate-limits',
    'the ban’s threshold',
    `After \`PETSTORE_BAN_AFTER\` (${defaultOf('PETSTORE_BAN_AFTER')}) refusals`,
  ],
  [
    'rate-limits',
    'the ban’s length',
    `a ban of \`PETSTORE_BAN_SECONDS\` (${defaultOf('PETSTORE_BAN_SECONDS')})`,
  ],
  [
    'reliability',
    'the header and body limits',
    `over ${maxHeaderSize / 1_024} KiB get 431 and a body over ${BODY_LIMIT_BYTES / 1_024} KiB 413`,
  ],
  [
    'reliability',
    'the slow-client deadlines',
    `\`PETSTORE_HEADERS_TIMEOUT_MS\` (${seconds('PETSTORE_HEADERS_TIMEOUT_MS')} s) or a request over ` +
      `\`PETSTORE_REQUEST_TIMEOUT_MS\` (${seconds('PETSTORE_REQUEST_TIMEOUT_MS')} s)`,
  ],
  ['scale-out', 'Redis at start-up', `after ${STARTUP_WAIT_MS / 1_000} s, one line naming \`REDIS_URL\``],
  [
    'scale-out',
    'the Redis circuit',
    `after ${MISSES_BEFORE_SKIPPING} misses in a row requests stop asking Redis at all, and a probe asks it ` +
      `once a ${second(PROBE_INTERVAL_MS)}`,
  ],
  [
    'scale-out',
    'the 503’s Retry-After',
    `503 \`unavailable\` with \`Retry-After: ${UNAVAILABLE_RETRY_AFTER_S}\``,
  ],
  ['scale-out', 'the readiness deadline', `\`/readyz\` is 503 within ${READY_TIMEOUT_MS / 1_000} s`],
  [
    'scale-out',
    'the dispatcher thread’s pool',
    `up to ${DISPATCHER_POOL_SIZE} more for its webhook dispatcher's thread (instances × (pool + ${DISPATCHER_POOL_SIZE})`,
  ],
  [
    'scale-out',
    'the drain’s idle grace',
    `connections still idle after ${IDLE_GRACE_MS / 1_000} s are closed`,
  ],
  [
    'scale-out',
    'the drain’s deadline',
    `within \`PETSTORE_DRAIN_SECONDS\` (${defaultOf('PETSTORE_DRAIN_SECONDS')})`,
  ],
  ['scale-out', 'a Free key across instances', `is admitted exactly ${free.perMinute} times`],
])('docs/%s.md quotes the code: %s', (page, _, phrase) => {
  expect(documentText(`docs/${page}.md`)).toContain(phrase)
})

it.each([
  'PETSTORE_DB_POOL_SIZE',
  'PETSTORE_DB_TIMEOUT_MS',
  'PETSTORE_REDIS_TIMEOUT_MS',
  'TRUST_PROXY',
] as const)("docs/scale-out.md's table gives %s the configuration's default", (variable) => {
  // | `VARIABLE` | what it is for | `default` |
  const row = new RegExp(`\\| \`${variable}\` \\|[^|]*\\| ([^|]*) \\|`).exec(
    documentText('docs/scale-out.md'),
  )
  expect(row?.[1]).toBe(`\`${defaultOf(variable)}\``)
})
