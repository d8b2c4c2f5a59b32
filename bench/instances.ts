/**
 * Writes over N instances sharing one PostgreSQL and Redis: createPet from `connections` in all, split
 * evenly over the instances, each instance its own load generator. Two figures tell whether events
 * serialise writers (issue 31, point 5): the writes with their events against the same writes with the
 * event insert removed (bench/service-variant.ts, `BENCH_EVENTS=off`), and three instances against one.
 * The variants alternate, round by round, so the machine's drift hits each alike.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { cpuTicks, TICK_MICROSECONDS, withChildren } from './cpu.js'
import { createRequest } from './harness.js'
import { median, runLoad, seedFreshPostgres, startService } from './lib.js'

/** `with`: every create emits `pet.created` (as deployed); `without`: the same service writing no event. */
export type EventsVariant = 'with' | 'without'

export interface InstancesRow {
  instances: number
  events: EventsVariant
  /** Creates a second in each round (all instances together). */
  rounds: number[]
  p99Ms: number
  failures: number
  /** CPU per create over every round (µs): the services' processes, and PostgreSQL's when known. */
  serviceMicroseconds: number
  postgresMicroseconds?: number
}

export async function measureWritesAcross(options: {
  env: Record<string, string>
  key: string
  instanceCounts: number[]
  connections: number
  duration: number
  rounds: number
  /** PostgreSQL's processes (the postmaster and its backends), for its CPU per create. */
  postgresPids?: () => number[]
}): Promise<InstancesRow[]> {
  const rows: InstancesRow[] = options.instanceCounts.flatMap((instances) =>
    (['with', 'without'] as const).map((events) => ({
      instances,
      events,
      rounds: [],
      p99Ms: 0,
      failures: 0,
      serviceMicroseconds: 0,
    })),
  )
  const cpu = rows.map(() => ({ service: 0, postgres: 0, creates: 0 }))
  for (let round = 0; round < options.rounds; round++) {
    for (const [index, row] of rows.entries()) {
      const result = await measureOnce(options, row.instances, row.events)
      row.rounds.push(result.createsPerSec)
      row.p99Ms = Math.max(row.p99Ms, result.p99Ms)
      row.failures += result.failures
      const spent = cpu[index] as (typeof cpu)[number]
      spent.service += result.serviceTicks
      spent.postgres += result.postgresTicks
      spent.creates += result.creates
    }
  }
  for (const [index, row] of rows.entries()) {
    const spent = cpu[index] as (typeof cpu)[number]
    const perCreate = (ticks: number) => (ticks * TICK_MICROSECONDS) / Math.max(1, spent.creates)
    row.serviceMicroseconds = perCreate(spent.service)
    if (options.postgresPids) row.postgresMicroseconds = perCreate(spent.postgres)
  }
  return rows
}

async function measureOnce(
  options: {
    env: Record<string, string>
    key: string
    connections: number
    duration: number
    postgresPids?: () => number[]
  },
  instances: number,
  events: EventsVariant,
) {
  const env = { ...options.env, BENCH_EVENTS: events === 'with' ? 'on' : 'off' }
  const servers = await Promise.all(
    Array.from({ length: instances }, () =>
      startService('', env, 'bench/service-variant.ts', ['--import', 'tsx']),
    ),
  )
  try {
    const request = createRequest({ authorization: `Bearer ${options.key}` })
    const load = (duration: number) =>
      Promise.all(
        servers.map((server) =>
          runLoad(server.child.pid ?? 0, {
            ...request,
            url: `http://127.0.0.1:${server.port}${request.path}`,
            connections: Math.max(1, Math.round(options.connections / instances)),
            duration,
          }),
        ),
      )
    // Warmed up first: compiled code, and the pools' connections open.
    await load(1)
    const pids = servers.map((server) => server.child.pid ?? 0)
    const postgres = ticksOf(options.postgresPids?.() ?? [])
    const before = cpuTicks(pids)
    const results = await load(options.duration)
    return {
      createsPerSec: results.reduce((sum, result) => sum + result.requestsPerSec, 0),
      p99Ms: Math.max(...results.map((result) => result.p99Ms)),
      failures: results.reduce((sum, result) => sum + result.failures, 0),
      creates: results.reduce((sum, result) => sum + result.requests, 0),
      serviceTicks: cpuTicks(pids) - before,
      // A backend started during the round counts whole; one that ended in it is left out.
      postgresTicks: [...ticksOf(options.postgresPids?.() ?? [])].reduce(
        (sum, [pid, ticks]) => sum + ticks - (postgres.get(pid) ?? 0),
        0,
      ),
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
  }
}

const ticksOf = (pids: number[]) => new Map(pids.map((pid) => [pid, cpuTicks([pid])]))

export function instancesMarkdown(rows: InstancesRow[], connections: number, duration: number): string {
  const rate = (instances: number, events: EventsVariant) =>
    median(rows.find((row) => row.instances === instances && row.events === events)?.rounds ?? [])
  const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : '-')
  const rounds = rows[0]?.rounds.length ?? 0
  return [
    '## Writes over instances (events published, never serialised between writers)',
    '',
    `createPet from ${connections} connections in all, split over the instances, ${duration} s a round, ${rounds} round(s) alternating; median creates/s. "with": every create emits \`pet.created\`, as deployed; "without": the same service with the event insert removed (bench/service-variant.ts). Goals (issue 31): with ÷ without ≥ 0.9; three instances ≥ one.`,
    '',
    '| instances | events | creates/s (each round) | median | with ÷ without | ÷ one instance (same variant) | CPU µs per create: services / PostgreSQL | p99 ms | failures |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows.map((row) => {
      const own = rate(row.instances, row.events)
      const withOverWithout = row.events === 'with' ? ratio(own, rate(row.instances, 'without')) : ''
      const rounds = row.rounds.map((value) => value.toFixed(0)).join(' · ')
      const cpu = `${row.serviceMicroseconds.toFixed(0)} / ${row.postgresMicroseconds?.toFixed(0) ?? '-'}`
      return `| ${row.instances} | ${row.events} | ${rounds} | ${own.toFixed(0)} | ${withOverWithout} | ${ratio(own, rate(1, row.events))} | ${cpu} | ${row.p99Ms} | ${row.failures} |`
    }),
    '',
  ].join('\n')
}

/**
 * Alone, on the servers scripts/with-services.sh starts (after `npm run build`):
 * `bash scripts/with-services.sh npx tsx bench/instances.ts [--rounds R --duration S --connections N]
 * [--instances 1,3]`.
 */
if (process.argv[1] === import.meta.filename) {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '3' },
      duration: { type: 'string', default: '6' },
      connections: { type: 'string', default: '24' },
      instances: { type: 'string', default: '1,3' },
    },
  })
  const adminUrl = process.env.TEST_POSTGRES_URL
  const redisUrl = process.env.TEST_REDIS_URL
  const pgData = process.env.TEST_PG_DATA
  if (!adminUrl || !redisUrl || !pgData) throw new Error('run it under scripts/with-services.sh')
  const postmaster = Number(readFileSync(join(pgData, 'postmaster.pid'), 'utf8').split('\n')[0])
  const { url, key } = await seedFreshPostgres(adminUrl, 10_000)
  const connections = Number(values.connections)
  const duration = Number(values.duration)
  const rows = await measureWritesAcross({
    env: { DATABASE_URL: url, REDIS_URL: redisUrl },
    key,
    instanceCounts: values.instances.split(',').map(Number),
    connections,
    duration,
    rounds: Number(values.rounds),
    postgresPids: () => withChildren(postmaster),
  })
  console.log(instancesMarkdown(rows, connections, duration))
}
