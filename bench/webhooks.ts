/**
 * Webhooks never on the request path (a section of `npm run bench`; alone, `npx tsx bench/webhooks.ts
 * [--duration S --connections N --quick]`, which only prints). On SQLite: createPet, placeOrder and
 * listPets-limit20, each measured and then at once again with three endpoints subscribed to `*`; then the
 * commit-to-first-attempt lag, one pet every 50 ms on an otherwise idle service.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { lagsOf, type Receiver, startReceiver, subscribe } from './deliveries.js'
import {
  type Auth,
  createHarness,
  createRequest,
  listRequest,
  orderRequest,
  type Request,
  withServer,
} from './harness.js'
import { type ServerProcess, seedDatabase, startService } from './lib.js'
import { type Row, rowTable, type Target, targetLines, versus } from './report.js'

const ENDPOINTS = 3
/** Available pets in each database: every order takes one, and a placeOrder row must not run out. */
const PETS = 200_000
/** Both services of a pair may send to loopback, so that only the subscriptions differ. */
const ENV = { PETSTORE_WEBHOOKS_ALLOW_PRIVATE: '1' }
const LAG_INTERVAL_MS = 50
/** How long the lag phase waits for the last deliveries after its last create. */
const TAIL_WAIT_MS = 10_000

/** Each pair: the row without endpoints, the row with them, its request and the events of one request. */
const PAIRS: { without: string; with: string; request: (auth: Auth) => Request; events: number }[] = [
  { without: 'listPets-limit20', with: 'listPets-webhooks', request: (auth) => listRequest(auth), events: 0 },
  { without: 'createPet', with: 'createPet-webhooks', request: createRequest, events: 1 },
  // order.placed and the pet's pet.updated
  { without: 'placeOrder', with: 'placeOrder-webhooks', request: orderRequest, events: 2 },
]

export interface WebhookPair {
  without: string
  with: string
  /** Deliveries per second that reached the receiver while the `-webhooks` row ran (warm-up included). */
  deliveriesPerSec: number
  /** Deliveries per second the row's commits made due (its events × the endpoints). */
  duePerSec: number
}

export interface LagFigures {
  seconds: number
  petsCreated: number
  expected: number
  /** Distinct (endpoint, event) deliveries that came within the wait. */
  delivered: number
  duplicates: number
  p50Ms: number
  p99Ms: number
  maxMs: number
}

export interface WebhookSection {
  pets: number
  /** Alternating rounds of each pair (the median stands). */
  rounds: number
  rows: Row[]
  pairs: WebhookPair[]
  lag: LagFigures
}

/** Of the rows named `name` (one per round), keeps the one of median throughput; returns its round. */
function keepMedianRow(rows: Row[], name: string): number {
  const rounds = rows.filter((row) => row.name === name)
  const median = [...rounds].sort((a, b) => a.requestsPerSec - b.requestsPerSec)[
    Math.floor(rounds.length / 2)
  ]
  for (const row of rounds) if (row !== median) rows.splice(rows.indexOf(row), 1)
  return median ? rounds.indexOf(median) : 0
}

/** One pet every LAG_INTERVAL_MS for `seconds`, then waits for every delivery (or TAIL_WAIT_MS). */
/** The receiver's `/1` … `/3`: the endpoints. */
const endpointUrls = (receiver: Receiver) =>
  Array.from({ length: ENDPOINTS }, (_, i) => `${receiver.base}/${i + 1}`)

async function measureLag(server: ServerProcess, auth: Auth, receiver: Receiver, seconds: number) {
  const from = await receiver.count()
  const { body } = createRequest(auth)
  const init = { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body }
  const sent: Promise<boolean>[] = []
  const start = performance.now()
  for (let i = 0; i < (seconds * 1000) / LAG_INTERVAL_MS; i++) {
    await delay(Math.max(0, start + i * LAG_INTERVAL_MS - performance.now()))
    const created = fetch(`http://127.0.0.1:${server.port}/v1/pets`, init)
    sent.push(
      created.then(async (response) => {
        await response.arrayBuffer()
        return response.status === 201
      }),
    )
  }
  const petsCreated = (await Promise.all(sent)).filter(Boolean).length
  const expected = petsCreated * ENDPOINTS
  const deadline = performance.now() + TAIL_WAIT_MS
  while ((await receiver.count()) - from < expected && performance.now() < deadline) await delay(20)
  const arrived = await receiver.deliveries(from)
  const lags = lagsOf(arrived)
  return {
    seconds,
    petsCreated,
    expected,
    delivered: lags.distinct,
    duplicates: arrived.length - lags.distinct,
    p50Ms: lags.p50,
    p99Ms: lags.p99,
    maxMs: lags.max,
  }
}

/**
 * The section's rows and lag. Every row runs on a fresh service over a fresh copy of one database, so
 * that a `-webhooks` row's backlog of deliveries never spills into the next row.
 */
export async function measureWebhooks(options: {
  dir: string
  duration: number
  connections: number
  warmUp: number
  lagSeconds: number
  /** Rounds of each pair (alternating); the median round is reported. */
  rounds: number
}): Promise<WebhookSection> {
  const template = join(options.dir, 'webhooks.sqlite')
  const key = await seedDatabase(template, PETS, { status: 'available' })
  const auth = { authorization: `Bearer ${key}` }
  let copies = 0
  const freshService = () => {
    const path = join(options.dir, `webhooks-${++copies}.sqlite`)
    copyFileSync(template, path)
    return startService(path, ENV)
  }
  const { rows, measure } = createHarness(options)
  const receiver = await startReceiver()
  try {
    const pairs: WebhookPair[] = []
    for (const pair of PAIRS) {
      // Rounds alternate without / with on this shared machine; the median round of each stands.
      const flows: { deliveriesPerSec: number; duePerSec: number }[] = []
      for (let round = 0; round < options.rounds; round++) {
        await withServer(freshService(), (server) => measure(pair.without, server, pair.request(auth)))
        await withServer(freshService(), async (server) => {
          await subscribe(server, key, endpointUrls(receiver), ['*'])
          const before = await receiver.count()
          const started = performance.now()
          await measure(pair.with, server, pair.request(auth))
          const deliveriesPerSec =
            ((await receiver.count()) - before) / ((performance.now() - started) / 1000)
          flows.push({
            deliveriesPerSec,
            duePerSec: (rows.at(-1)?.requestsPerSec ?? 0) * pair.events * ENDPOINTS,
          })
        })
      }
      keepMedianRow(rows, pair.without)
      const kept = keepMedianRow(rows, pair.with)
      pairs.push({ without: pair.without, with: pair.with, ...(flows[kept] ?? flows[0]) } as WebhookPair)
    }
    const lag = await withServer(freshService(), async (server) => {
      await subscribe(server, key, endpointUrls(receiver), ['*'])
      return measureLag(server, auth, receiver, options.lagSeconds)
    })
    console.log(
      `webhook lag           p50 ${lag.p50Ms} ms  p99 ${lag.p99Ms} ms  max ${lag.maxMs} ms  delivered ${lag.delivered}/${lag.expected}`,
    )
    return { pets: PETS, rows, pairs, lag, rounds: options.rounds }
  } finally {
    await receiver.close()
  }
}

export function webhooksMarkdown({ pets, rows, pairs, lag, rounds }: WebhookSection): string {
  const byName = new Map(rows.map((row) => [row.name, row]))
  const cpu = (name: string) => byName.get(name)?.cpuMicroseconds?.service?.toFixed(0) ?? '-'
  const pairLines = pairs.map((pair) => {
    const [without, withHooks] = [byName.get(pair.without), byName.get(pair.with)]
    const ratio = without && withHooks ? (withHooks.requestsPerSec / without.requestsPerSec).toFixed(2) : '-'
    return `| ${pair.without} | ${without?.requestsPerSec.toFixed(0) ?? '-'} | ${withHooks?.requestsPerSec.toFixed(0) ?? '-'} | ${ratio} | ${cpu(pair.without)} → ${cpu(pair.with)} | ${pair.deliveriesPerSec.toFixed(0)} of ${pair.duePerSec.toFixed(0)} |`
  })
  const targets: Target[] = [
    ...pairs.map((pair) => versus(pair.with, pair.without, 0.9)),
    {
      label: 'commit-to-first-attempt lag p99 ms (idle service, 3 endpoints)',
      value: () => lag.p99Ms,
      goal: 2000,
      atMost: true,
    },
  ]
  return [
    '## Webhooks off the request path',
    '',
    `On SQLite, each row on a fresh service (\`PETSTORE_WEBHOOKS_ALLOW_PRIVATE=1\`) over a fresh copy of one database of ${pets.toLocaleString('en')} available pets, each pair measured in ${rounds} alternating round(s) (without, with) of which the median stands; the \`-webhooks\` rows with ${ENDPOINTS} endpoints subscribed to \`*\`, all at one receiver (its own process, \`bench/receiver.ts\`) that answers 204 at once.`,
    '',
    ...rowTable(rows),
    '',
    "| pair | without req/s | with webhooks req/s | with ÷ without | service's CPU µs per request, without → with | deliveries/s that arrived, of those made due |",
    '|---|---|---|---|---|---|',
    ...pairLines,
    '',
    `Commit-to-first-attempt lag (the receiver's arrival − the event's \`createdAt\`, each delivery), one pet every ${LAG_INTERVAL_MS} ms for ${lag.seconds} s on an otherwise idle service with the ${ENDPOINTS} endpoints, waiting up to ${TAIL_WAIT_MS / 1000} s for the last:`,
    '',
    '| p50 ms | p99 ms | max ms | delivered / expected | duplicates |',
    '|---|---|---|---|---|',
    `| ${lag.p50Ms} | ${lag.p99Ms} | ${lag.maxMs} | ${lag.delivered} / ${lag.expected} | ${lag.duplicates} |`,
    '',
    '| target | goal | measured | |',
    '|---|---|---|---|',
    ...targetLines(rows, targets),
    '',
  ].join('\n')
}

if (process.argv[1] === import.meta.filename) {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '10' },
      connections: { type: 'string', default: '50' },
      quick: { type: 'boolean', default: false },
    },
  })
  const dir = mkdtempSync(join(tmpdir(), 'petstore-bench-'))
  try {
    const section = await measureWebhooks({
      dir,
      duration: values.quick ? 2 : Number(values.duration),
      connections: Number(values.connections),
      warmUp: values.quick ? 0.5 : 2,
      lagSeconds: values.quick ? 2 : 10,
      rounds: values.quick ? 1 : 3,
    })
    console.log(`\n${webhooksMarkdown(section)}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
