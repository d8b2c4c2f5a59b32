/**
 * `npm run bench:services [-- --duration S --connections N --quick --write]`: the scale-out path (one
 * instance over PostgreSQL + Redis, as deployed behind a balancer) beside the embedded one, in one run, on
 * the servers scripts/with-services.sh started. Rows: sqlite-list; pg-naive-list, pg-list, pg-naive-get,
 * pg-get, pg-create, pg-mixed. Each row reports CPU per request of the service, PostgreSQL (the postmaster
 * and its backends) and Redis, from /proc. A full run writes bench/SERVICES.md; --quick (CI) only prints.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { withChildren } from './cpu.js'
import { createHarness, createRequest, getPetRequest, listRequest, withServer } from './harness.js'
import { instancesMarkdown, measureWritesAcross } from './instances.js'
import { seedDatabase, seedFreshPostgres, startService, startTsScript } from './lib.js'
import { machine } from './report.js'
import { postgresStore } from './scale-stores.js'
import { servicesMarkdown } from './services-report.js'
import { measureWebhookScale, scaleMarkdown } from './webhook-scale.js'

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '8' },
    connections: { type: 'string', default: '50' },
    quick: { type: 'boolean', default: false },
    write: { type: 'boolean', default: false },
  },
})

const adminUrl = process.env.TEST_POSTGRES_URL
const redisUrl = process.env.TEST_REDIS_URL
const pgData = process.env.TEST_PG_DATA
const redisPidFile = process.env.TEST_REDIS_PID_FILE
if (!adminUrl || !redisUrl || !pgData || !redisPidFile) {
  throw new Error(
    'run it with `npm run bench:services` (scripts/with-services.sh starts PostgreSQL and Redis)',
  )
}
const postmaster = Number(readFileSync(join(pgData, 'postmaster.pid'), 'utf8').split('\n')[0])
const redisPid = Number(readFileSync(redisPidFile, 'utf8').trim())

// --quick is CI's smoke run: every row must run and print, its figures are no gate (one second each).
const duration = values.quick ? 1 : Number(values.duration)
const connections = Number(values.connections)
const { rows, measure, measureMixed } = createHarness({
  duration,
  connections,
  warmUp: values.quick ? 0.5 : 2,
  parts: { postgres: () => withChildren(postmaster), redis: () => [redisPid] },
})

const dir = await mkdtemp(join(tmpdir(), 'petstore-bench-services-'))
try {
  const sqlitePath = join(dir, 'pets.sqlite')
  const sqliteAuth = { authorization: `Bearer ${await seedDatabase(sqlitePath, 100_000)}` }
  await withServer(startService(sqlitePath), (server) =>
    measure('sqlite-list', server, listRequest(sqliteAuth)),
  )

  const { url, key } = await seedFreshPostgres(adminUrl, 100_000)
  const auth = { authorization: `Bearer ${key}` }
  const scaleOut = { DATABASE_URL: url, REDIS_URL: redisUrl }
  await withServer(startTsScript('bench/naive.ts', [url, key]), async (naive) => {
    await measure('pg-naive-list', naive, listRequest(auth))
    await measure('pg-naive-get', naive, getPetRequest(auth))
  })
  await withServer(startService(sqlitePath, scaleOut), async (server) => {
    await measure('pg-list', server, listRequest(auth))
    await measure('pg-get', server, getPetRequest(auth))
    await measure('pg-create', server, createRequest(auth))
    await measureMixed('pg-mixed', server, listRequest(auth), createRequest(auth))
  })

  const across = await measureWritesAcross({
    env: scaleOut,
    key,
    instanceCounts: [1, 3],
    connections,
    duration,
    rounds: values.quick ? 1 : 3,
    postgresPids: () => withChildren(postmaster),
  })
  const scale = await measureWebhookScale(postgresStore(adminUrl, redisUrl), { quick: values.quick })
  const command = `npm run bench:services -- ${process.argv.slice(2).join(' ')}`.trim()
  const report = `${servicesMarkdown(
    rows,
    machine(),
    command,
    `${connections} connections, ${duration} s per row`,
  )}\n${instancesMarkdown(across, connections, duration)}\n${scaleMarkdown(scale)}`
  console.log(`\n${report}`)
  if (!values.quick || values.write) writeFileSync('bench/SERVICES.md', report)
} finally {
  await rm(dir, { recursive: true, force: true })
}
