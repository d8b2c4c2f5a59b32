/**
 * Webhooks at partner scale (CONTRACT §14, round 4), a section of `npm run bench` (SQLite) and of
 * `npm run bench:services` (PostgreSQL + Redis); alone: `npx tsx bench/webhook-scale.ts [--quick]`.
 * Each scene on a fresh service over a fresh database, the receiver in a process of its own:
 * - throughput: createPet at full speed (16 connections) with 3 endpoints, then the backlog drained; beside
 *   it the delivery ceiling, a bare sender posting signed bodies of the same size to the same receiver
 *   with 4 connections per endpoint;
 * - isolation: account B's 3 endpoints, 500 pets at 100/s, alone and beside account A's 10 endpoints
 *   whose server accepts and never answers;
 * - fan-out: 100 accounts × 10 endpoints on `pet.*`, one pet a second, listPets load beside it, and the
 *   same listPets load without endpoints.
 * `--only throughput|fan-out` runs one scene and prints its figures; `--cpu-prof` profiles its service
 * into bench/profiles/ (read it with Chrome DevTools or speedscope); `--main DIR/main.js` runs another
 * build's service (a copy of `dist/` built at another commit, for pairs alternating with this one).
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { signatureHeader } from '../src/webhooks/signature.js'
import { cpuTicks, TICK_MICROSECONDS } from './cpu.js'
import { api, createAtRate, lagsOf, type Receiver, startReceiver, subscribe } from './deliveries.js'
import { createRequest, listRequest, withServer } from './harness.js'
import { runLoad, startService } from './lib.js'
import { type Store, sqliteStore } from './scale-stores.js'
import { steadyLoad } from './steady-load.js'

const ENV = { PETSTORE_WEBHOOKS_ALLOW_PRIVATE: '1' }
/** The service a scene starts: this tree's build, with no extra node options. */
const SERVICE: Service = { main: 'dist/main.js', nodeArgs: [] }

/** Which build a scene starts, and its node options. */
interface Service {
  main: string
  nodeArgs: string[]
}
/** listPets a second beside the fan-out scene. */
const LIST_RATE = 200

export interface ScaleFigures {
  /** Which store: SQLite, or PostgreSQL + Redis. */
  label: string
  throughput: {
    creates: number
    perSecond: number
    expected: number
    distinct: number
    lagP50Ms: number
    lagP99Ms: number
    deliveriesPerSecDuringWrites: number
    drainPerSec: number
    /** The service's CPU while it drained the backlog: its share of one core, and µs per delivery. */
    drainCpuShare: number
    drainCpuMicrosPerDelivery: number
    ceilingPerSec: number
  }
  isolation: { alone: IsolationRun; beside: IsolationRun }
  fanOut: FanOutRun
  listPetsP99Alone: number
}

async function throughputScene(store: Store, receiver: Receiver, seconds: number, service = SERVICE) {
  const { env, keys } = await store.fresh(1)
  const key = keys[0] as string
  return withServer(startService('', { ...ENV, ...env }, service.main, service.nodeArgs), async (server) => {
    await subscribe(
      server,
      key,
      [1, 2, 3].map((i) => `${receiver.base}/t${i}`),
      ['*'],
    )
    const from = await receiver.count()
    const request = createRequest({ authorization: `Bearer ${key}` })
    const load = await runLoad(server.child.pid ?? 0, {
      ...request,
      url: `http://127.0.0.1:${server.port}${request.path}`,
      connections: 16,
      duration: seconds,
    })
    const writesEnded = Date.now()
    const pid = server.child.pid ?? 0
    const ticksAtEnd = cpuTicks([pid])
    const creates = load.requests - load.failures
    await receiver.waitFor(from, creates * 3)
    const drainCpuMs = ((cpuTicks([pid]) - ticksAtEnd) * TICK_MICROSECONDS) / 1000
    const { distinct, p50, p99, arrivals } = lagsOf(await receiver.deliveries(from))
    const during = arrivals.filter((d) => d.arrivedAt <= writesEnded).length
    const last = Math.max(...arrivals.map((d) => d.arrivedAt))
    const sample = await (await api(server, key, 'GET', '/events?limit=1')).text()
    return {
      creates,
      perSecond: load.requestsPerSec,
      expected: creates * 3,
      distinct,
      lagP50Ms: p50,
      lagP99Ms: p99,
      deliveriesPerSecDuringWrites: during / seconds,
      drainPerSec: (distinct - during) / Math.max(0.001, (last - writesEnded) / 1000),
      drainCpuShare: drainCpuMs / Math.max(1, Date.now() - writesEnded),
      drainCpuMicrosPerDelivery: (drainCpuMs * 1000) / Math.max(1, distinct - during),
      sampleBody: JSON.stringify(JSON.parse(sample)[0] ?? {}),
    }
  })
}

/** The bare sender: `count` signed POSTs of `body` over 3 endpoint paths, 4 kept-alive sockets each. */
async function ceiling(receiver: Receiver, body: string, count: number): Promise<number> {
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`
  const agents = [1, 2, 3].map(() => new Agent({ keepAlive: true, maxSockets: 4 }))
  const send = (index: number) =>
    new Promise<void>((resolve, reject) => {
      const id = `evt_${String(index).padStart(16, '0')}`
      const timestamp = Math.floor(Date.now() / 1000)
      const req = request(`${receiver.base}/c${(index % 3) + 1}`, {
        method: 'POST',
        agent: agents[index % 3],
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader([secret], id, timestamp, body),
        },
      })
      req.on('response', (response) => response.resume().on('end', resolve))
      req.on('error', reject)
      req.end(body)
    })
  let next = 0
  const started = performance.now()
  // 12 workers: each endpoint's 4 sockets always busy.
  await Promise.all(
    Array.from({ length: 12 }, async () => {
      while (next < count) await send(next++)
    }),
  )
  const perSec = count / ((performance.now() - started) / 1000)
  for (const agent of agents) agent.destroy()
  return perSec
}

interface IsolationRun {
  expected: number
  distinct: number
  perSec: number
  lagP99Ms: number
}

async function isolationScene(
  store: Store,
  receiver: Receiver,
  hung: boolean,
  pets: number,
): Promise<IsolationRun> {
  const { env, keys } = await store.fresh(2)
  const [a, b] = keys as [string, string]
  return withServer(startService('', { ...ENV, ...env }), async (server) => {
    const tag = hung ? 'ib' : 'ia'
    if (hung)
      await subscribe(
        server,
        a,
        Array.from({ length: 10 }, (_, i) => `${receiver.base}/hang/${i}`),
      )
    await subscribe(
      server,
      b,
      [1, 2, 3].map((i) => `${receiver.base}/${tag}${i}`),
    )
    const from = await receiver.count()
    const started = Date.now()
    const created = await createAtRate(server, b, pets, 10)
    await receiver.waitFor(from, created * 3)
    const mine = (await receiver.deliveries(from)).filter((d) => d.endpoint.startsWith(`/${tag}`))
    const { distinct, p99, arrivals } = lagsOf(mine)
    const last = Math.max(...arrivals.map((d) => d.arrivedAt))
    return { expected: created * 3, distinct, perSec: distinct / ((last - started) / 1000), lagP99Ms: p99 }
  })
}

interface FanOutRun {
  expected: number
  distinct: number
  lagP99Ms: number
  listPetsP99Ms: number
  /** listPets answered other than 200 (a row with any is not a clean measurement). */
  listPetsFailures: number
  /** Dispatcher steps that failed (a transaction past the database deadline among them). */
  failedSteps: number
}

async function fanOutScene(
  store: Store,
  receiver: Receiver,
  seconds: number,
  endpoints: boolean,
  service = SERVICE,
) {
  const { env, keys } = await store.fresh(100)
  return withServer(
    startService('', { ...ENV, ...env }, service.main, service.nodeArgs),
    async (server): Promise<FanOutRun> => {
      if (endpoints) {
        for (const [account, key] of keys.entries()) {
          await subscribe(
            server,
            key,
            Array.from({ length: 10 }, (_, i) => `${receiver.base}/f${account}-${i}`),
          )
        }
      }
      const from = await receiver.count()
      const list = listRequest({ authorization: `Bearer ${keys[0]}` })
      const listing = {
        url: `http://127.0.0.1:${server.port}${list.path}`,
        headers: { authorization: `Bearer ${keys[0]}` },
        perSec: LIST_RATE,
      }
      // Untimed, so that both runs start warm (PostgreSQL's pool opens its connections as they are asked for).
      await steadyLoad({ ...listing, seconds: 1 })
      const [load, created] = await Promise.all([
        steadyLoad({ ...listing, seconds }),
        createAtRate(server, keys[0] as string, seconds, 1000),
      ])
      const expected = endpoints ? created * keys.length * 10 : 0
      await receiver.waitFor(from, expected)
      const { distinct, p99 } = lagsOf(await receiver.deliveries(from))
      const failedSteps = server
        .output()
        .split('\n')
        .filter((line) => line.includes('webhook dispatch failed')).length
      return {
        expected,
        distinct,
        lagP99Ms: p99,
        listPetsP99Ms: load.p99Ms,
        listPetsFailures: load.failures,
        failedSteps,
      }
    },
  )
}

/** Every scene, on fresh services over `store`'s fresh databases. */
export async function measureWebhookScale(store: Store, options: { quick: boolean }): Promise<ScaleFigures> {
  const receiver = await startReceiver()
  try {
    const { sampleBody, ...throughput } = await throughputScene(store, receiver, options.quick ? 3 : 10)
    const ceilingPerSec = await ceiling(receiver, sampleBody, Math.max(3_000, throughput.expected))
    const pets = options.quick ? 200 : 500
    const alone = await isolationScene(store, receiver, false, pets)
    const beside = await isolationScene(store, receiver, true, pets)
    const seconds = options.quick ? 10 : 60
    const fanOut = await fanOutScene(store, receiver, seconds, true)
    const quiet = await fanOutScene(store, receiver, seconds, false)
    return {
      label: store.label,
      throughput: { ...throughput, ceilingPerSec },
      isolation: { alone, beside },
      fanOut,
      listPetsP99Alone: quiet.listPetsP99Ms,
    }
  } finally {
    await receiver.close()
  }
}

/**
 * One scene alone, its service started with `service.nodeArgs` (`--cpu-prof --cpu-prof-dir=bench/profiles`, to
 * see where a delivery's time goes); its figures.
 */
async function measureScene(store: Store, scene: 'throughput' | 'fan-out', service: Service) {
  const receiver = await startReceiver()
  try {
    if (scene === 'fan-out') return await fanOutScene(store, receiver, 10, true, service)
    const { sampleBody: _, ...figures } = await throughputScene(store, receiver, 5, service)
    return figures
  } finally {
    await receiver.close()
  }
}

const n = (value: number) => Math.round(value).toLocaleString('en')
const ms = (value: number) => value.toFixed(2)
const ratio = (value: number, of: number) => (of > 0 ? (value / of).toFixed(2) : '-')

export function scaleMarkdown(f: ScaleFigures): string {
  const t = f.throughput
  const { alone, beside } = f.isolation
  return [
    `## Webhooks at partner scale (${f.label})`,
    '',
    '| scene | figure | goal |',
    '|---|---|---|',
    `| throughput: createPet, 16 connections, 3 endpoints | ${n(t.perSecond)} creates/s; ${n(t.distinct)} of ${n(t.expected)} delivered; lag p50 ${n(t.lagP50Ms)} ms, p99 ${n(t.lagP99Ms)} ms | p99 ≤ 2,000 ms |`,
    `| deliveries/s while writing · draining the backlog after | ${n(t.deliveriesPerSecDuringWrites)} · ${n(t.drainPerSec)} (service CPU ${(100 * t.drainCpuShare).toFixed(0)}% of a core, ${n(t.drainCpuMicrosPerDelivery)} µs per delivery) | |`,
    `| delivery ceiling: bare sender, 4 connections × 3 endpoints | ${n(t.ceilingPerSec)}/s; the dispatcher's drain ÷ ceiling **${ratio(t.drainPerSec, t.ceilingPerSec)}** | ≥ 0.5 |`,
    `| isolation: account B alone (3 endpoints, 100 pets/s) | ${n(alone.distinct)} of ${n(alone.expected)}; ${n(alone.perSec)}/s; lag p99 ${n(alone.lagP99Ms)} ms | |`,
    `| isolation: B beside A's 10 hung endpoints | ${n(beside.distinct)} of ${n(beside.expected)}; ${n(beside.perSec)}/s (**${ratio(beside.perSec, alone.perSec)}×** alone); lag p99 ${n(beside.lagP99Ms)} ms | ≥ 0.8×, p99 ≤ 2,000 ms |`,
    `| fan-out: 100 accounts × 10 endpoints, 1 pet/s | ${n(f.fanOut.distinct)} of ${n(f.fanOut.expected)}; lag p99 ${n(f.fanOut.lagP99Ms)} ms; failed dispatcher steps ${f.fanOut.failedSteps} | all, p99 ≤ 5,000 ms, 0 |`,
    `| listPets p99 at a steady ${LIST_RATE}/s beside the fan-out ÷ without endpoints | ${ms(f.fanOut.listPetsP99Ms)} ms ÷ ${ms(f.listPetsP99Alone)} ms = **${ratio(f.fanOut.listPetsP99Ms, f.listPetsP99Alone)}**${f.fanOut.listPetsFailures > 0 ? ` (${f.fanOut.listPetsFailures} not answered 200)` : ''} | ≤ 1.2 |`,
    '',
  ].join('\n')
}

if (process.argv[1] === import.meta.filename) {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      'cpu-prof': { type: 'boolean', default: false },
      main: { type: 'string', default: SERVICE.main },
    },
  })
  const dir = mkdtempSync(join(tmpdir(), 'petstore-scale-'))
  try {
    const store = sqliteStore(dir)
    const nodeArgs = values['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir=bench/profiles'] : []
    if (values.only === 'throughput' || values.only === 'fan-out') {
      console.log(await measureScene(store, values.only, { main: values.main, nodeArgs }))
    } else {
      console.log(scaleMarkdown(await measureWebhookScale(store, { quick: values.quick })))
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
