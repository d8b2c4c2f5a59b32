import { readFileSync } from 'node:fs'
import { expect, it } from 'vitest'
import { MAX_IN_FLIGHT_PER_ENDPOINT } from './attempts.repository.js'
import { BUSY_MS, LEASE_MS, LINGER_MS, MAX_IN_FLIGHT, MAX_LANES, POLL_MS, RENEW_MS } from './dispatcher.js'
import { MAX_ENDPOINTS_PER_ACCOUNT } from './endpoints.service.js'
import { RETENTION_MS } from './event-log.js'
import { FAN_OUT_AHEAD, FAN_OUT_EVENTS, FAN_OUT_ROWS } from './fan-out.js'
import { OPEN_CIRCUIT_CAP, QUEUE_SIZE } from './lanes.js'
import { MAX_TTL_S, RESOLVE_DEADLINE_MS } from './resolve.js'
import { PURGE_BATCH } from './retention.js'
import { CIRCUIT_OPENS_AFTER } from './schedule.js'
import { TEST_EVENTS_PER_MINUTE } from './test-events.js'

/** The README's prose, its lines joined (a phrase may be wrapped). */
const readme = readFileSync(new URL('README.md', import.meta.url), 'utf8').replace(/\s+/g, ' ')
const n = (value: number) => value.toLocaleString('en')

it.each([
  ['fan-out events per transaction', `takes up to ${n(FAN_OUT_EVENTS)} of them`],
  ['fan-out attempts per transaction', `writes at most ${n(FAN_OUT_ROWS)} attempts`],
  ['the fan-out gate', `has ${FAN_OUT_AHEAD} attempts due`],
  ['lanes per instance', `up to ${n(MAX_LANES)} at once`],
  ['sockets per instance', `(${n(MAX_IN_FLIGHT)} in all`],
  ['a lane’s queue', `up to ${QUEUE_SIZE} of the endpoint's due attempts`],
  ['the cap and the open circuit', `(${MAX_IN_FLIGHT_PER_ENDPOINT} in flight; ${OPEN_CIRCUIT_CAP} while`],
  [
    'the lease',
    `renewed every ${RENEW_MS / 1000 === 1 ? 'second' : `${RENEW_MS / 1000} s`} and lasts ${LEASE_MS / 1000} s`,
  ],
  ['starting nothing unrenewed', `could not renew for ${(LEASE_MS - RENEW_MS) / 1000} s`],
  ['an idle lane', `nothing to send for a ${LINGER_MS === 1000 ? 'second' : `${LINGER_MS} ms`} is let go`],
  ['the steps', `every ${POLL_MS} ms (every ${BUSY_MS} ms while busy)`],
  ['the circuit', `from ${CIRCUIT_OPENS_AFTER} the circuit is open`],
  ['test events', `at most ${TEST_EVENTS_PER_MINUTE} test events a minute`],
  [
    'one account’s share',
    `holds at most ${MAX_ENDPOINTS_PER_ACCOUNT * MAX_IN_FLIGHT_PER_ENDPOINT} of an instance's ${n(MAX_IN_FLIGHT)} sockets`,
  ],
  ['the lookup', `${RESOLVE_DEADLINE_MS / 1000} s in all then cancelled`],
  ['the TTL cap', `at most ${MAX_TTL_S / 60} minutes`],
  [
    'retention',
    `older than ${RETENTION_MS / 86_400_000} days are deleted, ${n(PURGE_BATCH)} rows per transaction`,
  ],
])('src/webhooks/README.md quotes the code: %s', (_, phrase) => {
  expect(readme).toContain(phrase)
})
