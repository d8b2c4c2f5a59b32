import { readFileSync } from 'node:fs'
import { expect, it } from 'vitest'
import { loadConfig } from '../config.js'
import { PURGE_INTERVAL_MS } from '../deps.js'
import { CATCH_UP_TRANSACTIONS, PUBLISH_BOUND } from '../events/events.publisher.js'
import { EVENT_ID_DIGITS } from '../events/events.repository.js'
import { COUNTED_UP_TO, TOP_ACCOUNTS } from '../http/metrics.js'
import { MAX_URL_LENGTH } from './address.js'
import { ENDING_BATCH, MAX_IN_FLIGHT_PER_ENDPOINT } from './attempts.repository.js'
import { TAKE_CHUNK_ENDPOINTS } from './claims.repository.js'
import { BUSY_MS, MAX_IN_FLIGHT, POLL_MS } from './dispatcher.js'
import { REPORT_MS, RESTART_MS } from './dispatcher-thread.js'
import { MAX_ENDPOINTS_PER_ACCOUNT } from './endpoints.service.js'
import { RETENTION_MS } from './event-log.js'
import { DEMAND_PROBES, FAN_OUT_AHEAD, FAN_OUT_EVENTS, FAN_OUT_ROWS, PASS_OVER_EVENTS } from './fan-out.js'
import {
  MAX_IN_FLIGHT_PER_ACCOUNT,
  MAX_QUEUE_SIZE,
  OPEN_CIRCUIT_CAP,
  QUEUE_SIZE,
  REREAD_MS,
  STARTS_PER_TURN,
  STEPS_QUEUED,
} from './lane.js'
import { LATE_READ_WARN_MS, OWNERSHIP_WINDOW_MS, READ_AHEAD_ATTEMPTS } from './ownership-windows.js'
import { MAX_TTL_S, RESOLVE_DEADLINE_MS, SECOND_FAMILY_WAIT_MS } from './resolve.js'
import { PURGE_BATCH } from './retention.js'
import {
  CIRCUIT_OPENS_AFTER,
  FAILING_DISABLES_AFTER_MS,
  JITTER,
  MAX_ATTEMPTS,
  RETRY_AFTER_CAP_MS,
  RETRY_DELAYS_MS,
} from './schedule.js'
import {
  CONNECTIONS_PER_ENDPOINT,
  EXCERPT_BYTES,
  KEEP_ALIVE_MS,
  MAX_POOLS,
  POOLS_PER_ENDPOINT,
} from './send.js'
import { MAX_RETIRED_SECRETS } from './signature.js'
import {
  ENDPOINTS_PER_STEP,
  HOLD_MS,
  LEASE_MS,
  LINGER_MS,
  MAX_LANES,
  RENEW_MS,
  SETTLED_PER_STEP,
} from './step.js'
import { SWEEP_EVERY_MS, SWEEP_GRACE_MS } from './sweep.js'
import { TEST_EVENTS_PER_MINUTE } from './test-events.js'
import { DEFAULT_GRACE_SECONDS, MAX_GRACE_SECONDS } from './webhooks.schemas.js'

/** The README's prose, its lines joined (a phrase may be wrapped). */
const readme = readFileSync(new URL('README.md', import.meta.url), 'utf8').replace(/\s+/g, ' ')
const n = (value: number) => value.toLocaleString('en')
const days = (ms: number) => ms / 86_400_000
/** The README spells five days out. */
const fiveDays =
  days(FAILING_DISABLES_AFTER_MS) === 5 ? 'five days' : `${days(FAILING_DISABLES_AFTER_MS)} days`
/** A delay of the retry schedule as the README writes it: `5 s`, `30 min`, `10 h`. */
const delay = (ms: number) =>
  ms < 60_000 ? `${ms / 1000} s` : ms < 3_600_000 ? `${ms / 60_000} min` : `${ms / 3_600_000} h`

it.each([
  ['what the folder deletes', `deletes them after ${days(RETENTION_MS)} days`],
  ['event ids', `zero-padded to ${EVENT_ID_DIGITS} digits`],
  ['events numbered per transaction', `at most ${n(PUBLISH_BOUND)} per transaction (\`PUBLISH_BOUND\`)`],
  ['a catch-up’s transactions', `(\`createEventCatchUp\`, at most ${CATCH_UP_TRANSACTIONS}, else a 503`],
  ['fan-out events per transaction', `takes up to ${n(FAN_OUT_EVENTS)} of them`],
  ['fan-out attempts per transaction', `writes at most ${n(FAN_OUT_ROWS)} attempts`],
  ['the fan-out gate', `has ${FAN_OUT_AHEAD} attempts due`],
  ['endpoints a plan asks', `asks at most ${DEMAND_PROBES} endpoints (\`DEMAND_PROBES\`)`],
  ['what the fan-out gate leaves out', `a fast lane queues up to ${n(MAX_QUEUE_SIZE)}, and counting them`],
  ['events passed over', `up to ${n(PASS_OVER_EVENTS)} a statement at each poll`],
  ['lanes per instance', `up to ${n(MAX_LANES)} at once`],
  [
    'a step’s bounds',
    `A step leases at most ${ENDPOINTS_PER_STEP} endpoints and refills at most ${ENDPOINTS_PER_STEP} lanes' queues`,
  ],
  ['outcomes a step writes down', `writes down at most ${n(SETTLED_PER_STEP)} attempts that ended`],
  ['starts per turn', `start at most ${STARTS_PER_TURN} attempts per turn of the event loop`],
  ['sockets per instance', `(${n(MAX_IN_FLIGHT)} in all`],
  ['a lane’s queue', `up to ${QUEUE_SIZE} of the endpoint's due attempts`],
  [
    'a fast lane’s queue',
    `started more than ${QUEUE_SIZE / STEPS_QUEUED} since the step before keeps ${STEPS_QUEUED === 4 ? '4 times' : `${STEPS_QUEUED} times`} what it started queued, up to ${n(MAX_QUEUE_SIZE)}`,
  ],
  ['a failed ownership read', `asked again ${REREAD_MS} ms later`],
  ['PostgreSQL’s ownership window', `read for \`OWNERSHIP_WINDOW_MS\` (${OWNERSHIP_WINDOW_MS} ms)`],
  ['how often a late ownership read is logged', `logged at most every ${LATE_READ_WARN_MS / 1000} s`],
  ['attempts a PostgreSQL ownership read asks about ahead', `up to ${READ_AHEAD_ATTEMPTS} queued behind it`],
  [
    'an ending’s batch and the sweep',
    `ends ${n(ENDING_BATCH)} of the endpoint's pending attempts in its own transaction (\`ENDING_BATCH\`), and the dispatchers end the rest, ${n(ENDING_BATCH)} a transaction, within ${SWEEP_EVERY_MS === 1000 ? 'a second' : `${SWEEP_EVERY_MS} ms`} of it`,
  ],
  ['a fan-out’s rows, unlocked', `writes attempts for (up to ${n(FAN_OUT_ROWS)} a transaction`],
  ['the answer after a DELETE or a disable', `they answer ${OWNERSHIP_WINDOW_MS} ms after their commit`],
  ['the cap and the open circuit', `(${MAX_IN_FLIGHT_PER_ENDPOINT} in flight; ${OPEN_CIRCUIT_CAP} while`],
  [
    'the lease',
    `renewed every ${RENEW_MS / 1000 === 1 ? 'second' : `${RENEW_MS / 1000} s`} and lasts ${LEASE_MS / 1000} s`,
  ],
  ['starting nothing unrenewed', `could not renew for ${(LEASE_MS - RENEW_MS) / 1000} s`],
  ['an idle lane', `nothing to send for a ${LINGER_MS === 1000 ? 'second' : `${LINGER_MS} ms`} is let go`],
  ['making room at the cap', `as many lanes held at least ${HOLD_MS / 1000} s make room`],
  ['an account’s share', `its account fewer than ${MAX_IN_FLIGHT_PER_ACCOUNT} in flight`],
  ['kept-alive pools', `beyond ${n(MAX_POOLS)} pools in all, the one used longest ago`],
  ['the steps', `every ${POLL_MS} ms (every ${BUSY_MS} ms while busy)`],
  ['the answer read', `at most ${EXCERPT_BYTES / 1024} KiB of the answer is read`],
  ['an endpoint’s own pools', `and beyond ${POOLS_PER_ENDPOINT} its own pool used longest ago is closed`],
  ['an idle connection', `An idle one closes after ${KEEP_ALIVE_MS / 1000} s at most (\`KEEP_ALIVE_MS\`)`],
  ['connections kept per endpoint', `an undici pool of ${CONNECTIONS_PER_ENDPOINT} connections per endpoint`],
  ['a take on PostgreSQL', `on PostgreSQL one statement for up to ${TAKE_CHUNK_ENDPOINTS} lanes`],
  ['the thread’s reports', `Every ${REPORT_MS} ms it reports to the main thread`],
  [
    'the thread’s priority',
    `the thread runs ${loadConfig({}).webhooks.threadNice} nice levels below the process by default`,
  ],
  ['a failed thread', `started again ${RESTART_MS === 1000 ? 'a second' : `${RESTART_MS} ms`} later`],
  [
    'another instance taking over',
    `may take the endpoint ${RENEW_MS === 1000 ? 'a second' : `${RENEW_MS} ms`} later`,
  ],
  [
    'a step',
    `at most every ${BUSY_MS} ms while busy: leases renewed (every ${RENEW_MS === 1000 ? 'second' : `${RENEW_MS} ms`})`,
  ],
  [
    'the retry schedule',
    `schedules the next attempt after ${RETRY_DELAYS_MS.map(delay).join(', ')} (±${JITTER * 100} %`,
  ],
  [
    'Retry-After and the last attempt',
    `capped at ${RETRY_AFTER_CAP_MS === 3_600_000 ? 'an hour' : `${RETRY_AFTER_CAP_MS} ms`}), and after the ${MAX_ATTEMPTS}th the delivery has failed`,
  ],
  ['disabling a failing endpoint', `a failure ${fiveDays} later disables it`],
  ['the circuit', `from ${CIRCUIT_OPENS_AFTER} the circuit is open`],
  ['test events', `at most ${TEST_EVENTS_PER_MINUTE} test events a minute`],
  [
    'an account’s endpoints',
    `at most ${MAX_ENDPOINTS_PER_ACCOUNT} endpoints, each with at most ${MAX_IN_FLIGHT_PER_ENDPOINT} requests ` +
      `in flight (${OPEN_CIRCUIT_CAP} once it has failed ${CIRCUIT_OPENS_AFTER} times in a row)`,
  ],
  [
    'one failing account’s share',
    `${MAX_ENDPOINTS_PER_ACCOUNT * OPEN_CIRCUIT_CAP} once its endpoints keep failing`,
  ],
  [
    'what every account shares',
    `the ${n(MAX_IN_FLIGHT)} sockets and ${n(MAX_LANES)} leased endpoints per instance: about ` +
      `${Math.round(MAX_LANES / MAX_ENDPOINTS_PER_ACCOUNT / 10) * 10} accounts`,
  ],
  [
    'one account’s share',
    `holds at most ${MAX_ENDPOINTS_PER_ACCOUNT * MAX_IN_FLIGHT_PER_ENDPOINT} of an instance's ${n(MAX_IN_FLIGHT)} sockets`,
  ],
  ['the lookup', `${RESOLVE_DEADLINE_MS / 1000} s in all then cancelled`],
  ['the second family', `AAAA or A ${SECOND_FAMILY_WAIT_MS} ms at most once the other family answered`],
  ['the TTL cap', `at most ${MAX_TTL_S / 60} minutes`],
  [
    'retention',
    `Every ${PURGE_INTERVAL_MS / 60_000} minutes events and finished attempts older than ` +
      `${days(RETENTION_MS)} days are deleted, ${n(PURGE_BATCH)} rows per transaction`,
  ],
  ['a test event’s redelivery', `it does not count in the ${TEST_EVENTS_PER_MINUTE} a minute`],
  [
    'graceSeconds',
    `0 to ${n(MAX_GRACE_SECONDS)} (${days(MAX_GRACE_SECONDS * 1000)} days); default ${n(DEFAULT_GRACE_SECONDS)}`,
  ],
  [
    'the secrets that sign',
    `(the ${MAX_RETIRED_SECRETS} newest: up to ${MAX_RETIRED_SECRETS + 1} signatures)`,
  ],
  ['disabling', `a 410 or ${fiveDays} of failures`],
  ['a deleted endpoint', `a 404 and does not count in the ${MAX_ENDPOINTS_PER_ACCOUNT}.`],
  ['URLs', `at most ${n(MAX_URL_LENGTH)} characters`],
  ['the in-flight gauge', `this instance's ${TOP_ACCOUNTS} busiest accounts`],
  ['the queue gauges’ cap', `counted up to ${n(COUNTED_UP_TO)} (\`COUNTED_UP_TO\`)`],
  [
    'how long the sweep keeps an ended endpoint',
    `lets one go ${SWEEP_GRACE_MS === 60_000 ? 'a minute' : `${SWEEP_GRACE_MS / 1000} s`} after its ending (\`SWEEP_GRACE_MS\``,
  ],
  ['the circuit’s threshold', `open after ${CIRCUIT_OPENS_AFTER} failed attempts in a row`],
])('src/webhooks/README.md quotes the code: %s', (_, phrase) => {
  expect(readme).toContain(phrase)
})
