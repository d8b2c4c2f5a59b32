/**
 * Where listPets spends its time: `npm run bench:profile [-- --path /v1/pets?limit=20 --duration 10]`.
 * Runs the service under `node --cpu-prof` with load, then prints the functions and packages with the
 * most self time. The .cpuprofile stays in bench/profiles/ for Chrome DevTools or speedscope.
 * `npm run bench:profile:services [-- …]`: the same over PostgreSQL and Redis (scripts/with-services.sh).
 * `--webhooks`: with three webhook endpoints subscribed to every event, at a receiver in this process.
 * `--tracing all|sampled`: with OpenTelemetry tracing on, exporting every span (or 1% of the traces) to a
 * local OTLP receiver (bench/otlp-sink.ts).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { runLoad, seedDatabase, seedFreshPostgres, startProcess, startTsScript } from './lib.js'

type ProfileNode = { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }

const { values } = parseArgs({
  options: {
    path: { type: 'string', default: '/v1/pets?limit=20' },
    duration: { type: 'string', default: '10' },
    method: { type: 'string', default: 'GET' },
    services: { type: 'boolean', default: false },
    webhooks: { type: 'boolean', default: false },
    tracing: { type: 'string' },
  },
})
const dir = mkdtempSync(join(tmpdir(), 'petstore-profile-'))
const profiles = join('bench', 'profiles')
mkdirSync(profiles, { recursive: true })
const before = new Set(readdirSync(profiles))
const { database, key } = await seeded()
const sink = values.tracing ? await startTsScript('bench/otlp-sink.ts', []) : undefined
const tracing: NodeJS.ProcessEnv = sink
  ? {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sink.port}`,
      ...(values.tracing === 'sampled' && {
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.01',
      }),
    }
  : {}
const portOf = (output: string) =>
  Number(/listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1]) || undefined
const server = await startProcess(
  process.execPath,
  ['--cpu-prof', `--cpu-prof-dir=${profiles}`, 'dist/main.js'],
  portOf,
  { ...database, ...tracing, PORT: '0', ...(values.webhooks && { PETSTORE_WEBHOOKS_ALLOW_PRIVATE: '1' }) },
)
const receiver = values.webhooks ? await subscribeThreeEndpoints() : undefined

/** A receiver answering 204 at once, and three endpoints of the key's account subscribed to `*` there. */
async function subscribeThreeEndpoints() {
  const receiver = createServer((request, response) => {
    request.resume().on('end', () => response.writeHead(204).end())
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  const { port } = receiver.address() as AddressInfo
  for (const path of ['/1', '/2', '/3']) {
    await fetch(`http://127.0.0.1:${server.port}/v1/webhook_endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `http://127.0.0.1:${port}${path}`, events: ['*'] }),
    })
  }
  return receiver
}
/** 100,000 pets in a SQLite file, or with --services in PostgreSQL (and limits in Redis). */
async function seeded(): Promise<{ database: NodeJS.ProcessEnv; key: string }> {
  const { TEST_POSTGRES_URL: adminUrl, TEST_REDIS_URL: redisUrl } = process.env
  if (!values.services) {
    const path = join(dir, 'profile.sqlite')
    return { database: { DATABASE_URL: `sqlite:${path}` }, key: await seedDatabase(path, 100_000) }
  }
  if (!adminUrl || !redisUrl) throw new Error('--services runs under scripts/with-services.sh')
  const { url, key } = await seedFreshPostgres(adminUrl, 100_000)
  return { database: { DATABASE_URL: url, REDIS_URL: redisUrl }, key }
}

const body = JSON.stringify({ name: 'Profile', categoryId: 1 })
const result = await runLoad(server.child.pid ?? 0, {
  url: `http://127.0.0.1:${server.port}${values.path}`,
  method: values.method as 'GET' | 'POST',
  headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  ...(values.method === 'POST' && { body }),
  connections: 50,
  duration: Number(values.duration),
})
await server.stop()
await sink?.stop()
receiver?.close()
rmSync(dir, { recursive: true, force: true })
console.log(
  `${values.method} ${values.path}: ${result.requestsPerSec.toFixed(0)} req/s, p99 ${result.p99Ms} ms`,
)

const file = readdirSync(profiles).find((name) => name.endsWith('.cpuprofile') && !before.has(name)) ?? ''
const profile = JSON.parse(readFileSync(join(profiles, file), 'utf8')) as {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}
const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
const byFunction = new Map<string, number>()
const byPackage = new Map<string, number>()
let total = 0
profile.samples.forEach((id, index) => {
  const frame = nodes.get(id)?.callFrame
  const delta = profile.timeDeltas[index] ?? 0
  if (!frame) return
  total += delta
  const where = frame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/dist\//, 'dist/')
  const name = `${frame.functionName || '(anonymous)'} ${where}:${frame.lineNumber}`
  byFunction.set(name, (byFunction.get(name) ?? 0) + delta)
  const owner =
    /node_modules\/((@[^/]+\/)?[^/]+)/.exec(frame.url)?.[1] ??
    (frame.url.includes('/dist/') ? 'petstore' : frame.url.startsWith('node:') ? 'node' : frame.functionName)
  byPackage.set(owner, (byPackage.get(owner) ?? 0) + delta)
})
const top = (map: Map<string, number>, count: number) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, time]) => `${((100 * time) / total).toFixed(1).padStart(5)}%  ${name}`)
console.log(`\nself time by function (${file})\n${top(byFunction, 25).join('\n')}`)
console.log(`\nself time by package\n${top(byPackage, 12).join('\n')}`)
