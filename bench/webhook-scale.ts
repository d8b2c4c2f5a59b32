/**
 * Webhooks at partner scale (CONTRACT §14, round 4), a section of `npm run bench` (SQLite) and of
 * `npm run bench:services` (PostgreSQL + Redis); alone: `npx tsx bench/webhook-scale.ts [--quick]`.
 * Each scene on a fresh service over a fresh database, the receiver in a process of its own:
 * - throughput: createPet at full speed (16 connections) with 3 endpoints, then the backlog drained; beside
 *   it the delivery ceiling, a bare sender posting signed bodies of the same size to the same receiver
 *   with 4 connections per endpoint (bare-sender.ts), and a control (full runs only, not `--quick`): the
 *   same createPet load with no endpoint, alone and then beside the bare sender as fast as it goes (what
 *   this machine leaves any sender, and what such a sender leaves the creates);
 * - isolation: account B's 3 endpoints, 500 pets at 100/s, alone and beside account A's 10 endpoints
 *   whose server accepts and never answers;
 * - fan-out: 100 accounts × 10 endpoints on `pet.*`, one pet a second, listPets load beside it; the
 *   same listPets load without endpoints; and a control (full runs only), without endpoints but beside
 *   the bare sender posting 1,000 a second to 1,000 paths of the same receiver (what the receiver and a
 *   sender cost).
 * `--only throughput|fan-out [--seconds S]` runs one scene (5 s of writes; 10 s of fan-out, then the same
 * without endpoints, with the listPets ratio and the service's CPU per delivery) and prints its figures;
 * `--cpu-prof` profiles its service into bench/profiles/ (read it with Chrome DevTools or speedscope);
 * `--main DIR/main.js` runs another build's service (a copy of `dist/` built at another commit, for pairs
 * alternating with this one);
 * `--postgres`, under scripts/with-services.sh, runs the scenes on PostgreSQL + Redis.
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { bareSend, inProcess } from './bare-sender.js'
import { cpuTicks, TICK_MICROSECONDS } from './cpu.js'
import { api, createAtRate, lagsOf, type Receiver, startReceiver, subscribe } from './deliveries.js'
import { createRequest, listRequest, withServer } from './harness.js'
import { runLoad, startService } from './lib.js'
import { postgresStore, type Store, sqliteStore } from './scale-stores.js'
import { steadyLoad } from './steady-load.js'

const ENV = { PETSTORE_WEBHOOKS_ALLOW_PRIVATE: '1' }
/** The bare sender's paths in the throughput scenes: one per endpoint, as the dispatcher's 3. */
const THREE_PATHS = ['/c1', '/c2', '/c3']
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
    /** What one of the bare sender's POSTs cost in CPU (µs): the sender's process, the receiver's. */
    ceilingCpuMicrosPerPost: { sender: number; receiver: number }
    /**
     * The same createPet load with no endpoint, alone and then beside the bare sender as fast as it goes
     * (full runs only, as the other control: `--quick` is CI's smoke run).
     */
    whileWriting?: { createsAlonePerSec: number; createsPerSec: number; senderPerSec: number }
  }
  isolation: { alone: IsolationRun; beside: IsolationRun }
  fanOut: FanOutRun
  listPetsP99Alone: number
  /** The service's CPU in the run without endpoints (ms). */
  quietCpuMs: number
  /** The same listPets load with no endpoint, beside the bare sender posting 1,000 a second. */
  listPetsP99BesideBareSender?: number
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
    // Creates counted by the store, not by the answers: a request in flight when the load stops is
    // not counted by autocannon, but its pet commits and its events are owed.
    const available = async () =>
      ((await (await api(server, key, 'GET', '/store/inventory')).json()) as { available?: number })
        .available ?? 0
    const availableBefore = await available()
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
    await new Promise((resolve) => setTimeout(resolve, 200))
    const creates = (await available()) - availableBefore
    await receiver.waitFor(from, creates * 3)
    const drainCpuMs = ((cpuTicks([pid]) - ticksAtEnd) * TICK_MICROSECONDS) / 1000
    const { distinct, p50, p99, arrivals } = lagsOf(await receiver.deliveries(from))
    const during = arrivals.filter((d) => d.arrivedAt <= writesEnded).length
    const last = arrivals.reduce((latest, d) => Math.max(latest, d.arrivedAt), 0)
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

/**
 * What the machine leaves any sender while createPet runs at full speed: the service with no endpoint,
 * the same load alone, then beside it the bare sender as fast as it goes (in a process of its own). What
 * the creates keep beside a sender that is not the dispatcher is the most a dispatcher could leave them.
 */
async function ceilingWhileWriting(store: Store, receiver: Receiver, seconds: number, body: string) {
  const { env, keys } = await store.fresh(1)
  return withServer(startService('', { ...ENV, ...env }), async (server) => {
    const request = createRequest({ authorization: `Bearer ${keys[0]}` })
    const creates = () =>
      runLoad(server.child.pid ?? 0, {
        ...request,
        url: `http://127.0.0.1:${server.port}${request.path}`,
        connections: 16,
        duration: seconds,
      })
    const alone = await creates()
    const [load, sender] = await Promise.all([
      creates(),
      inProcess({ base: receiver.base, paths: THREE_PATHS, body, pace: { seconds } }),
    ])
    return {
      createsAlonePerSec: alone.requestsPerSec,
      createsPerSec: load.requestsPerSec,
      senderPerSec: sender.perSec,
    }
  })
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
    const last = arrivals.reduce((latest, d) => Math.max(latest, d.arrivedAt), 0)
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
  /** The service's CPU (every thread) while the pets were made and listPets ran beside, in ms. */
  cpuMs: number
}

async function fanOutScene(
  store: Store,
  receiver: Receiver,
  seconds: number,
  endpoints: boolean,
  service = SERVICE,
  bareBody?: string,
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
      // The control: with no endpoint, the receiver's and a sender's work as the fan-out would bring them.
      const paths = Array.from({ length: 1_000 }, (_, i) => `/g${i}`)
      const pace = { perSec: 1_000, seconds }
      const pid = server.child.pid ?? 0
      const ticksBefore = cpuTicks([pid])
      const [load, created] = await Promise.all([
        steadyLoad({ ...listing, seconds }),
        createAtRate(server, keys[0] as string, seconds, 1000),
        bareBody && inProcess({ base: receiver.base, paths, body: bareBody, pace }),
      ])
      const cpuMicros = (cpuTicks([pid]) - ticksBefore) * TICK_MICROSECONDS
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
        cpuMs: cpuMicros / 1000,
      }
    },
  )
}

/**
 * The delivery ceiling: the bare sender, in this process, posting as many signed `body`s as the scene owed
 * (3,000 at least) to the receiver's three paths, 4 connections each; its rate, and the CPU each POST cost
 * the sender and the receiver (what one delivery costs at the least on this machine).
 */
async function ceiling(receiver: Receiver, body: string, owed: number) {
  const sender = process.cpuUsage()
  const received = cpuTicks([receiver.pid])
  const bare = await bareSend({
    base: receiver.base,
    paths: THREE_PATHS,
    body,
    pace: { count: Math.max(3_000, owed) },
  })
  const spent = process.cpuUsage(sender)
  const receiverMicros = (cpuTicks([receiver.pid]) - received) * TICK_MICROSECONDS
  return {
    ceilingPerSec: bare.perSec,
    ceilingCpuMicrosPerPost: {
      sender: (spent.user + spent.system) / bare.sent,
      receiver: receiverMicros / bare.sent,
    },
  }
}

/** Every scene, on fresh services over `store`'s fresh databases. */
export async function measureWebhookScale(store: Store, options: { quick: boolean }): Promise<ScaleFigures> {
  const receiver = await startReceiver()
  try {
    const { sampleBody, ...throughput } = await throughputScene(store, receiver, options.quick ? 2 : 10)
    const bare = await ceiling(receiver, sampleBody, throughput.expected)
    const whileWriting = options.quick
      ? undefined
      : await ceilingWhileWriting(store, receiver, 10, sampleBody)
    const pets = options.quick ? 100 : 500
    const alone = await isolationScene(store, receiver, false, pets)
    const beside = await isolationScene(store, receiver, true, pets)
    const seconds = options.quick ? 3 : 60
    const fanOut = await fanOutScene(store, receiver, seconds, true)
    const quiet = await fanOutScene(store, receiver, seconds, false)
    const control = options.quick
      ? undefined
      : await fanOutScene(store, receiver, seconds, false, SERVICE, sampleBody)
    return {
      label: store.label,
      throughput: { ...throughput, ...bare, ...(whileWriting && { whileWriting }) },
      isolation: { alone, beside },
      fanOut,
      listPetsP99Alone: quiet.listPetsP99Ms,
      quietCpuMs: quiet.cpuMs,
      ...(control && { listPetsP99BesideBareSender: control.listPetsP99Ms }),
    }
  } finally {
    await receiver.close()
  }
}

/**
 * One scene alone, its service started with `service.nodeArgs` (`--cpu-prof --cpu-prof-dir=bench/profiles`, to
 * see where a delivery's time goes); its figures (the throughput scene's with the bare sender's ceiling,
 * measured after it).
 */
async function measureScene(
  store: Store,
  scene: 'throughput' | 'fan-out',
  service: Service,
  seconds: number,
) {
  const receiver = await startReceiver()
  try {
    if (scene === 'fan-out') {
      const fanOut = await fanOutScene(store, receiver, seconds, true, service)
      const quiet = await fanOutScene(store, receiver, seconds, false, service)
      const listPetsP99Ratio = fanOut.listPetsP99Ms / quiet.listPetsP99Ms
      const cpuMicrosPerDelivery = (1000 * (fanOut.cpuMs - quiet.cpuMs)) / Math.max(1, fanOut.expected)
      return { fanOut, quiet, listPetsP99Ratio, cpuMicrosPerDelivery }
    }
    const { sampleBody, ...figures } = await throughputScene(store, receiver, seconds, service)
    const bare = await ceiling(receiver, sampleBody, figures.expected)
    return { ...figures, ...bare, drainOfCeiling: figures.drainPerSec / bare.ceilingPerSec }
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
    `| delivery ceiling: bare sender, 4 connections × 3 endpoints | ${n(t.ceilingPerSec)}/s; the dispatcher's drain ÷ ceiling **${ratio(t.drainPerSec, t.ceilingPerSec)}**; CPU per POST: sender ${n(t.ceilingCpuMicrosPerPost.sender)} µs, receiver ${n(t.ceilingCpuMicrosPerPost.receiver)} µs | ≥ 0.5 |`,
    ...(t.whileWriting
      ? [
          `| control: the bare sender beside the same createPet load, no endpoint | ${n(t.whileWriting.senderPerSec)}/s beside ${n(t.whileWriting.createsPerSec)} creates/s (3 a create: ${ratio(t.whileWriting.senderPerSec, 3 * t.whileWriting.createsPerSec)}× of what keeping up takes); the creates ÷ the same load alone (${n(t.whileWriting.createsAlonePerSec)}/s): ${ratio(t.whileWriting.createsPerSec, t.whileWriting.createsAlonePerSec)} | |`,
        ]
      : []),
    `| isolation: account B alone (3 endpoints, 100 pets/s) | ${n(alone.distinct)} of ${n(alone.expected)}; ${n(alone.perSec)}/s; lag p99 ${n(alone.lagP99Ms)} ms | |`,
    `| isolation: B beside A's 10 hung endpoints | ${n(beside.distinct)} of ${n(beside.expected)}; ${n(beside.perSec)}/s (**${ratio(beside.perSec, alone.perSec)}×** alone); lag p99 ${n(beside.lagP99Ms)} ms | ≥ 0.8×, p99 ≤ 2,000 ms |`,
    `| fan-out: 100 accounts × 10 endpoints, 1 pet/s | ${n(f.fanOut.distinct)} of ${n(f.fanOut.expected)}; lag p99 ${n(f.fanOut.lagP99Ms)} ms; failed dispatcher steps ${f.fanOut.failedSteps}; service CPU ${n(f.fanOut.cpuMs)} ms (${n(f.quietCpuMs)} without endpoints) | all, p99 ≤ 5,000 ms, 0 |`,
    `| listPets p99 at a steady ${LIST_RATE}/s beside the fan-out ÷ without endpoints | ${ms(f.fanOut.listPetsP99Ms)} ms ÷ ${ms(f.listPetsP99Alone)} ms = **${ratio(f.fanOut.listPetsP99Ms, f.listPetsP99Alone)}**${f.fanOut.listPetsFailures > 0 ? ` (${f.fanOut.listPetsFailures} not answered 200)` : ''} | ≤ 1.2 |`,
    ...(f.listPetsP99BesideBareSender === undefined
      ? []
      : [
          `| control: the same listPets load, no endpoint, the bare sender posting 1,000/s to 1,000 paths | ${ms(f.listPetsP99BesideBareSender)} ms ÷ ${ms(f.listPetsP99Alone)} ms = ${ratio(f.listPetsP99BesideBareSender, f.listPetsP99Alone)} | |`,
        ]),
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
      postgres: { type: 'boolean', default: false },
      seconds: { type: 'string' },
    },
  })
  const dir = mkdtempSync(join(tmpdir(), 'petstore-scale-'))
  try {
    const { TEST_POSTGRES_URL: adminUrl, TEST_REDIS_URL: redisUrl } = process.env
    if (values.postgres && !(adminUrl && redisUrl))
      throw new Error('--postgres runs under scripts/with-services.sh')
    const store =
      values.postgres && adminUrl && redisUrl ? postgresStore(adminUrl, redisUrl) : sqliteStore(dir)
    const nodeArgs = values['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir=bench/profiles'] : []
    if (values.only === 'throughput' || values.only === 'fan-out') {
      const seconds = Number(values.seconds ?? (values.only === 'fan-out' ? 10 : 5))
      console.log(await measureScene(store, values.only, { main: values.main, nodeArgs }, seconds))
    } else {
      console.log(scaleMarkdown(await measureWebhookScale(store, { quick: values.quick })))
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
