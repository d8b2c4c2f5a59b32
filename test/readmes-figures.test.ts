import { expect, it } from 'vitest'
import { WALK_PAGE_SIZE } from '../client/src/client.js'
import { LONG_WAIT_MS, OPTION_DEFAULTS } from '../client/src/options.js'
import { SHOWN_PREFIX_LENGTH } from '../src/api-keys/api-keys.format.js'
import { limitsFor } from '../src/api-keys/api-keys.plans.js'
import { DEFAULT_USAGE_DAYS, MAX_USAGE_DAYS } from '../src/api-keys/usage.routes.js'
import { DEFAULT_ROTATION_GRACE } from '../src/cli/keys.js'
import { DEFAULT_KEYS_USAGE_DAYS } from '../src/cli/keys-usage.js'
import { DEMO_PETS, USAGE_DAYS } from '../src/demo.js'
import { MAX_IDS } from '../src/pets/pets.schemas.js'
import { RETENTION_MS } from '../src/webhooks/event-log.js'
import { FAILING_DISABLES_AFTER_MS, RETRY_DELAYS_MS } from '../src/webhooks/schedule.js'
import { TEST_EVENTS_PER_MINUTE } from '../src/webhooks/test-events.js'
import { DEFAULT_GRACE_SECONDS } from '../src/webhooks/webhooks.schemas.js'
import { days, defaultOf, delay, documentText, inWords, numberDefault, second } from './figures.js'

/**
 * The figures the root README and the client's README quote are the code's constants and the
 * configuration's defaults (the configuration table itself is written from the schema and checked by
 * config-docs.test.ts; the pages of docs/: docs-figures.test.ts). Examples are not checked.
 */

const schedule = RETRY_DELAYS_MS.map(delay)
const retried = `${schedule.slice(0, -1).join(', ')} and ${schedule.at(-1)}`

it.each([
  ['where it serves', `at \`http://${defaultOf('HOST')}:${defaultOf('PORT')}/v1\``],
  [
    'the demo',
    `with ${DEMO_PETS} pets of every status, one open order, a test key with ${inWords(USAGE_DAYS / 7)} weeks of usage`,
  ],
  [
    'the demo command',
    `seeded with ${DEMO_PETS} pets and one open order, a \`pro\` test key with ${inWords(USAGE_DAYS / 7)} weeks of usage`,
  ],
  ['the receiver’s deadline', `any 2xx within ${numberDefault('PETSTORE_WEBHOOK_TIMEOUT_MS') / 1_000} s`],
  ['the retry schedule', `retried with the same \`webhook-id\` after ${retried}.`],
  ['a failing endpoint', `so do ${inWords(days(FAILING_DISABLES_AFTER_MS))} days of failures`],
  [
    'the configuration’s words for it',
    `the ${days(FAILING_DISABLES_AFTER_MS)} days before a failing endpoint`,
  ],
  ['the event log', `\`GET /v1/events\` lists the last ${days(RETENTION_MS)} days`],
  ['test events', `at most ${TEST_EVENTS_PER_MINUTE} a minute per endpoint`],
  ['the shown prefix', `(\`ps_live_\` + ${SHOWN_PREFIX_LENGTH - 'ps_live_'.length} characters)`],
  ['the rotation’s grace', `(default \`${DEFAULT_ROTATION_GRACE}\`, \`0\` at once)`],
  ['keys usage', `(default the last ${DEFAULT_KEYS_USAGE_DAYS})`],
  [
    'GET /v1/usage',
    `(experimental; 1 to ${MAX_USAGE_DAYS} days, default ${DEFAULT_USAGE_DAYS}, newest first)`,
  ],
  ['the client’s long waits', `says so when a wait is longer than a ${second(LONG_WAIT_MS)}`],
])('README.md quotes the code: %s', (_, phrase) => {
  expect(documentText('README.md')).toContain(phrase)
})

it.each([
  ['pets.all’s pages', `(${WALK_PAGE_SIZE} a page unless \`limit\` says otherwise)`],
  ['usage’s days', `every day of the range (1 to ${MAX_USAGE_DAYS}, default ${DEFAULT_USAGE_DAYS}) present`],
  ['getPets’ ids', `those of 1–${MAX_IDS} ids that exist`],
  [
    'a rotation’s grace',
    `(default ${DEFAULT_GRACE_SECONDS === 86_400 ? 'a day' : `${DEFAULT_GRACE_SECONDS} s`})`,
  ],
  ['the event log', `the events the account sees (${days(RETENTION_MS)} days)`],
  ['test events', `at most ${TEST_EVENTS_PER_MINUTE} a minute per endpoint`],
  ['a Free key', `on a Free key (${limitsFor('free').perMinute} a minute)`],
  ['maxRetries', `| \`maxRetries\` | \`${OPTION_DEFAULTS.maxRetries}\` |`],
  ['baseDelayMs', `| \`baseDelayMs\` | \`${OPTION_DEFAULTS.baseDelayMs}\` |`],
  ['maxDelayMs', `| \`maxDelayMs\` | \`${OPTION_DEFAULTS.maxDelayMs}\` |`],
  ['maxRetryAfterMs', `| \`maxRetryAfterMs\` | \`${OPTION_DEFAULTS.maxRetryAfterMs}\` |`],
  ['onRetry’s long waits', `when a 429 makes a call wait longer than a ${second(LONG_WAIT_MS)}`],
])('client/README.md quotes the code: %s', (_, phrase) => {
  expect(documentText('client/README.md')).toContain(phrase)
})
