/**
 * listPets beside the fan-out, in alternating windows of one service: `npx tsx bench/fan-out-rounds.ts
 * [--rounds R --seconds S --main DIR/main.js --node-option OPTION…] [--postgres]` (PostgreSQL under
 * scripts/with-services.sh; `--node-option`, repeatable, is passed to the service's node).
 * The fan-out scene of bench/webhook-scale.ts (100 accounts × 10 endpoints on `pet.*`, listPets at a
 * steady 200 a second) compares two services, one with endpoints and one without; but two identical
 * services on this machine can differ by 15 % for their whole life (docs/observability.md, "Why fresh
 * processes"), and that ratio moved from 0.95 to 3.56 between runs of one build. Here one service, its
 * endpoints subscribed, alternates windows of S seconds: a *busy* one (one pet created a second, so
 * 1,000 deliveries a second) and a *quiet* one (no pet created, so nothing to deliver), in an order
 * turned every round, each busy window followed by the wait for its last delivery. Each round's ratio
 * is the busy window's listPets p99 ÷ the quiet window's; the figure is their median. What the
 * quiet window lacks besides the deliveries: a pet created a second (its request, and the cache it
 * empties once a second). `--control`: the same service with no endpoint, its busy windows the bare
 * sender (bare-sender.ts, a process of its own) posting 1,000 signed bodies a second to 1,000 paths of the
 * same receiver: what a sender and the receiver cost listPets on this machine, the dispatcher aside.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { inProcess } from './bare-sender.js'
import { api, createAtRate, lagsOf, startReceiver, subscribe } from './deliveries.js'
import { listRequest, withServer } from './harness.js'
import { median, type ServerProcess, startService } from './lib.js'
import { postgresStore, sqliteStore } from './scale-stores.js'
import { steadyLoad } from './steady-load.js'

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '6' },
    seconds: { type: 'string', default: '10' },
    main: { type: 'string', default: 'dist/main.js' },
    postgres: { type: 'boolean', default: false },
    control: { type: 'boolean', default: false },
    'node-option': { type: 'string', multiple: true, default: [] },
  },
})
const ROUNDS = Number(values.rounds)
const SECONDS = Number(values.seconds)
/** listPets a second, as in the fan-out scene. */
const LIST_RATE = 200

/** A window's listPets p99, its answers other than 200, and (a fan-out window) its deliveries' lag p99. */
interface Window {
  p99Ms: number
  failures: number
  lagP99Ms?: number
}

/**
 * The control's busy work: the bare sender posting 1,000 signed bodies a second for a window to 1,000 paths
 * of the receiver at `base`. The body is an event as the API lists it, the one a pet created now makes (the
 * control's service has no endpoint to take it).
 */
async function controlSender(server: ServerProcess, key: string, base: string) {
  await (await api(server, key, 'POST', '/pets', { name: 'Sample', categoryId: 1 })).arrayBuffer()
  const body = JSON.stringify(JSON.parse(await (await api(server, key, 'GET', '/events?limit=1')).text())[0])
  const paths = Array.from({ length: 1_000 }, (_, i) => `/g${i}`)
  return () => inProcess({ base, paths, body, pace: { perSec: 1_000, seconds: SECONDS } })
}

const dir = mkdtempSync(join(tmpdir(), 'petstore-rounds-'))
const receiver = await startReceiver()
try {
  const { TEST_POSTGRES_URL: adminUrl, TEST_REDIS_URL: redisUrl } = process.env
  if (values.postgres && !(adminUrl && redisUrl))
    throw new Error('--postgres runs under scripts/with-services.sh')
  const store = values.postgres && adminUrl && redisUrl ? postgresStore(adminUrl, redisUrl) : sqliteStore(dir)
  const { env, keys } = await store.fresh(100)
  const serviceEnv = { ...env, PETSTORE_WEBHOOKS_ALLOW_PRIVATE: '1' }
  await withServer(startService('', serviceEnv, values.main, values['node-option']), async (server) => {
    const key = keys[0] as string
    if (!values.control)
      for (const [account, owner] of keys.entries())
        await subscribe(
          server,
          owner,
          Array.from({ length: 10 }, (_, i) => `${receiver.base}/f${account}-${i}`),
        )
    const listing = {
      url: `http://127.0.0.1:${server.port}${listRequest({}).path}`,
      headers: { authorization: `Bearer ${key}` },
      perSec: LIST_RATE,
    }
    const bareSender = values.control ? await controlSender(server, key, receiver.base) : undefined
    await steadyLoad({ ...listing, seconds: 2 })
    const windows: Record<'busy' | 'quiet', () => Promise<Window>> = {
      async busy() {
        if (bareSender) {
          const [load] = await Promise.all([steadyLoad({ ...listing, seconds: SECONDS }), bareSender()])
          return { p99Ms: load.p99Ms, failures: load.failures }
        }
        const from = await receiver.count()
        const [load, created] = await Promise.all([
          steadyLoad({ ...listing, seconds: SECONDS }),
          createAtRate(server, key, SECONDS, 1_000),
        ])
        await receiver.waitFor(from, created * keys.length * 10)
        return {
          p99Ms: load.p99Ms,
          failures: load.failures,
          lagP99Ms: lagsOf(await receiver.deliveries(from)).p99,
        }
      },
      async quiet() {
        const load = await steadyLoad({ ...listing, seconds: SECONDS })
        return { p99Ms: load.p99Ms, failures: load.failures }
      },
    }
    const ratios: number[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? (['busy', 'quiet'] as const) : (['quiet', 'busy'] as const)
      const seen = {} as Record<'busy' | 'quiet', Window>
      for (const window of order) seen[window] = await windows[window]()
      const { busy, quiet } = seen
      ratios.push(busy.p99Ms / quiet.p99Ms)
      console.log(
        `round ${round + 1} (${order.join(' then ')}): listPets p99 ${busy.p99Ms.toFixed(2)} ÷ ${quiet.p99Ms.toFixed(2)} ms = ${(busy.p99Ms / quiet.p99Ms).toFixed(2)}${busy.lagP99Ms === undefined ? '' : `; fan-out lag p99 ${Math.round(busy.lagP99Ms)} ms`}; not 200: ${busy.failures + quiet.failures}`,
      )
    }
    console.log(
      `${store.label}: listPets p99 beside ${values.control ? 'the bare sender (control)' : 'the fan-out'} ÷ quiet, median of ${ROUNDS} rounds: ${median(ratios).toFixed(2)}${values.control ? '' : ' (goal ≤ 1.2)'}`,
    )
  })
} finally {
  await receiver.close()
  rmSync(dir, { recursive: true, force: true })
}
