import { readFileSync } from 'node:fs'
import { expect, it } from 'vitest'
import { RETENTION_MS } from '../webhooks/event-log.js'
import {
  CATCH_UP_TRANSACTIONS,
  PUBLISH_BATCH,
  PUBLISH_BATCHES_PER_TRANSACTION,
  PUBLISH_BOUND,
} from './events.publisher.js'
import { EVENT_ID_DIGITS, EVENT_TYPES, PING } from './events.repository.js'

/** The README's prose, its lines joined (a phrase may be wrapped). */
const readme = readFileSync(new URL('README.md', import.meta.url), 'utf8').replace(/\s+/g, ' ')
const n = (value: number) => value.toLocaleString('en')

it.each([
  ['events moved per statement of a publication', `up to ${n(PUBLISH_BATCH)} per statement`],
  ['events moved per publication', `at most ${n(PUBLISH_BOUND)} per transaction`],
  [
    'statements per publication',
    `${PUBLISH_BATCHES_PER_TRANSACTION === 5 ? 'five' : PUBLISH_BATCHES_PER_TRANSACTION} statements of ${n(PUBLISH_BATCH)}`,
  ],
  [
    'a catch-up’s bound',
    `at most ${CATCH_UP_TRANSACTIONS} (${n(CATCH_UP_TRANSACTIONS * PUBLISH_BOUND)} events; beyond, a 503`,
  ],
  ['event ids', `zero-padded to ${EVENT_ID_DIGITS} digits`],
  ['retention', `deletes them after ${RETENTION_MS / 86_400_000} days`],
])('the README quotes %s as the code has it', (_, phrase) => {
  expect(readme).toContain(phrase)
})

it('names every event type, and the test event’s', () => {
  const named = `Types: ${EVENT_TYPES.map((type) => `\`${type}\``).join(', ')}, and \`${PING}\``
  expect(readme).toContain(named)
})
