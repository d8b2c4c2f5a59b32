/**
 * Writes over N instances sharing one PostgreSQL and Redis: createPet (each emits `pet.created`) from
 * `connections` in all, split evenly over the instances, each instance its own load generator. The figure
 * that tells whether events serialise writers (CONTRACT §14): three instances write at least as fast as one.
 */
import { createRequest } from './harness.js'
import { runLoad, startService } from './lib.js'

export interface InstancesRow {
  instances: number
  createsPerSec: number
  p99Ms: number
  failures: number
}

export async function measureWritesAcross(options: {
  env: Record<string, string>
  key: string
  instances: number
  connections: number
  duration: number
  /** The service's entry point (another build of it, to compare two versions in one run). */
  main?: string
}): Promise<InstancesRow> {
  const servers = await Promise.all(
    Array.from({ length: options.instances }, () => startService('', options.env, options.main)),
  )
  try {
    const request = createRequest({ authorization: `Bearer ${options.key}` })
    const results = await Promise.all(
      servers.map((server) =>
        runLoad(server.child.pid ?? 0, {
          ...request,
          url: `http://127.0.0.1:${server.port}${request.path}`,
          connections: Math.max(1, Math.round(options.connections / options.instances)),
          duration: options.duration,
        }),
      ),
    )
    return {
      instances: options.instances,
      createsPerSec: results.reduce((sum, result) => sum + result.requestsPerSec, 0),
      p99Ms: Math.max(...results.map((result) => result.p99Ms)),
      failures: results.reduce((sum, result) => sum + result.failures, 0),
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
  }
}

export function instancesMarkdown(rows: InstancesRow[], connections: number, duration: number): string {
  const one = rows.find((row) => row.instances === 1)?.createsPerSec ?? 0
  return [
    '## Writes over instances (events published, never serialised between writers)',
    '',
    `createPet from ${connections} connections in all, split over the instances, ${duration} s; every create emits \`pet.created\`.`,
    '',
    '| instances | creates/s | ÷ one instance | p99 ms | failures |',
    '|---|---|---|---|---|',
    ...rows.map(
      (row) =>
        `| ${row.instances} | ${row.createsPerSec.toFixed(0)} | ${one ? (row.createsPerSec / one).toFixed(2) : '-'} | ${row.p99Ms} | ${row.failures} |`,
    ),
    '',
  ].join('\n')
}
