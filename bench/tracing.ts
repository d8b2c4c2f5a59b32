import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { cpuTicks, TICK_MICROSECONDS } from './cpu.js'
import { type Auth, createRequest, listRequest, type Request } from './harness.js'
import {
  type LoadResult,
  median,
  runLoad,
  type ServerProcess,
  seedDatabase,
  startService,
  startTsScript,
} from './lib.js'

/** One operation's throughput with tracing off, on with every span exported, and on at 1% sampling. */
export interface TracingRow {
  operation: string
  /** Requests per second in each round, by setting. */
  rounds: Record<Setting, number[]>
  p99Ms: Record<Setting, number>
  /** The service's CPU per request (µs), over every round: steadier than req/s on a shared machine. */
  cpuMicroseconds: Record<Setting, number>
  /** Spans dropped by the services (the metric) at the end: a row with any did not export everything. */
  dropped: number
}

type Setting = 'off' | 'all spans' | '1% sampled'
const SETTINGS: Setting[] = ['off', 'all spans', '1% sampled']

/**
 * What tracing costs (`npm run bench` runs it; alone: `npx tsx bench/tracing.ts [--rounds R --duration S]`):
 * the service as users start it, three times on one SQLite file: tracing off, tracing on exporting every
 * span (OTLP/protobuf, the default) to a local collector's stand-in (its own process,
 * bench/otlp-sink.ts), and on at 1% (`parentbased_traceidratio`).
 *
 * **Fresh processes every round.** Identical services started side by side (tracing off, measured in
 * alternating rounds) kept their own speed for a whole run and differed by up to 15 % (1.00 / 1.03 / 1.15 in
 * one run, 1.00 / 0.89 / 0.92 / 0.92 in another; 0.94–1.04 with the address layout and V8's seeds fixed):
 * a process's speed is set early in its life and moves more than the costs measured here.
 * So each round starts the three anew, in an order turned by one each round, warms each up, measures each
 * once and stops them; a setting's ratio is the median over rounds of its throughput over tracing off's in
 * the same round.
 */
export async function measureTracing(options: {
  databasePath: string
  auth: Auth
  duration: number
  connections: number
  rounds: number
  /** Each fresh process's warm-up before it is measured (s): its code compiled by load, not by the rounds. */
  warmUp: number
}): Promise<TracingRow[]> {
  const sink = await startTsScript('bench/otlp-sink.ts', [])
  const endpoint = `http://127.0.0.1:${sink.port}`
  const envOf: Record<Setting, NodeJS.ProcessEnv> = {
    off: {},
    'all spans': { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint },
    '1% sampled': {
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.01',
    },
  }
  try {
    const operations: [string, Request][] = [
      ['listPets', listRequest(options.auth)],
      ['createPet', createRequest(options.auth)],
    ]
    const rows: TracingRow[] = []
    for (const [operation, request] of operations) rows.push(await measureOperation(operation, request))
    return rows
  } finally {
    await sink.stop()
  }

  async function measureOperation(operation: string, request: Request): Promise<TracingRow> {
    const row: TracingRow = {
      operation,
      rounds: { off: [], 'all spans': [], '1% sampled': [] },
      p99Ms: { off: 0, 'all spans': 0, '1% sampled': 0 },
      cpuMicroseconds: { off: 0, 'all spans': 0, '1% sampled': 0 },
      dropped: 0,
    }
    const cpu = {
      off: { ticks: 0, requests: 0 },
      'all spans': { ticks: 0, requests: 0 },
      '1% sampled': { ticks: 0, requests: 0 },
    }
    for (let round = 0; round < options.rounds; round++) {
      const order = [...SETTINGS.slice(round % 3), ...SETTINGS.slice(0, round % 3)]
      const servers = new Map<Setting, ServerProcess>()
      try {
        for (const setting of order)
          servers.set(setting, await startService(options.databasePath, envOf[setting]))
        const load = (setting: Setting, duration: number): Promise<LoadResult> => {
          const server = servers.get(setting) as ServerProcess
          return runLoad(server.child.pid ?? 0, {
            url: `http://127.0.0.1:${server.port}${request.path}`,
            method: request.method ?? 'GET',
            headers: request.headers,
            body: request.body,
            connections: options.connections,
            duration,
          })
        }
        for (const setting of order) await load(setting, options.warmUp)
        for (const setting of order) {
          const pid = servers.get(setting)?.child.pid ?? 0
          const before = cpuTicks([pid])
          const result = await load(setting, options.duration)
          cpu[setting].ticks += cpuTicks([pid]) - before
          cpu[setting].requests += result.requests
          row.rounds[setting].push(result.requestsPerSec)
          row.p99Ms[setting] = Math.max(row.p99Ms[setting], result.p99Ms)
        }
        for (const setting of SETTINGS)
          row.dropped += await droppedSpans(servers.get(setting) as ServerProcess)
      } finally {
        await Promise.all([...servers.values()].map((server) => server.stop()))
      }
    }
    for (const setting of SETTINGS)
      row.cpuMicroseconds[setting] =
        (cpu[setting].ticks * TICK_MICROSECONDS) / Math.max(1, cpu[setting].requests)
    const ratios = SETTINGS.slice(1).map((setting) => `${setting} ${ratioOf(row, setting).toFixed(3)}`)
    const perRequest = SETTINGS.map((setting) => row.cpuMicroseconds[setting].toFixed(0)).join(' / ')
    console.log(
      `tracing ${operation.padEnd(10)} ${ratios.join(', ')} (× off; CPU µs/request ${perRequest}; dropped ${row.dropped})`,
    )
    return row
  }
}

async function droppedSpans(server: ServerProcess): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text()
  return [...text.matchAll(/^petstore_trace_spans_dropped_total\{[^}]*\} (\d+)/gm)].reduce(
    (sum, match) => sum + Number(match[1]),
    0,
  )
}

/** The median over rounds of a setting's throughput over tracing off's in the same round. */
export const ratioOf = (row: TracingRow, setting: Setting) =>
  median(row.rounds[setting].map((value, round) => value / Math.max(1, row.rounds.off[round] ?? 0)))

export function tracingMarkdown(rows: TracingRow[], rounds: number): string {
  const lines = [
    '## Tracing (OpenTelemetry): what it costs',
    '',
    `The same service three times on one SQLite file, in ${rounds} round(s) of fresh processes: tracing off, on exporting every span to a local OTLP receiver, on at 1% sampling. Median req/s; × off is the median of each round's ratio; the goal is ≥ 0.85× (all spans) and ≥ 0.97× (1%) for listPets.`,
    '',
    '| operation | off req/s | all spans req/s | × off | 1% sampled req/s | × off | p99 ms off / all / 1% | CPU µs/request off / all / 1% | spans dropped |',
    '|---|---|---|---|---|---|---|---|---|',
  ]
  for (const row of rows) {
    const value = (setting: Setting) => median(row.rounds[setting]).toFixed(0)
    const p99 = SETTINGS.map((setting) => row.p99Ms[setting]).join(' / ')
    const cpu = SETTINGS.map((setting) => row.cpuMicroseconds[setting].toFixed(0)).join(' / ')
    lines.push(
      `| ${row.operation} | ${value('off')} | ${value('all spans')} | ${ratioOf(row, 'all spans').toFixed(3)} | ${value('1% sampled')} | ${ratioOf(row, '1% sampled').toFixed(3)} | ${p99} | ${cpu} | ${row.dropped} |`,
    )
  }
  return `${lines.join('\n')}\n`
}

if (process.argv[1] === import.meta.filename) {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '3' },
      duration: { type: 'string', default: '5' },
      connections: { type: 'string', default: '50' },
    },
  })
  const dir = mkdtempSync(join(tmpdir(), 'petstore-tracing-'))
  try {
    const databasePath = join(dir, 'tracing.sqlite')
    const key = await seedDatabase(databasePath, 10_000)
    const rounds = Number(values.rounds)
    const rows = await measureTracing({
      databasePath,
      auth: { authorization: `Bearer ${key}` },
      duration: Number(values.duration),
      connections: Number(values.connections),
      rounds,
      warmUp: 2,
    })
    console.log(tracingMarkdown(rows, rounds))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
