/**
 * `npm run bench [-- --duration S --connections N --quick --write]`: the ceiling, the naive sketch,
 * Petstore's rows, json-server and Prism, the scale rows, each server alone, with the same
 * connections and duration; then the webhooks section (bench/webhooks.ts), its rows in a table of their own,
 * and what tracing costs (bench/tracing.ts).
 * A full run writes bench/RESULTS.md and bench/results.json; --quick (about two minutes) only prints,
 * unless --write is given too.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { startJsonServer, startPrism } from './competitors.js'
import { type Auth, createHarness, createRequest, getPetRequest, listRequest, withServer } from './harness.js'
import { type ServerProcess, seedDatabase, startService, startTsScript } from './lib.js'
import { machine, markdown } from './report.js'
import { sqliteStore } from './scale-stores.js'
import { measureTracing, tracingMarkdown } from './tracing.js'
import { measureWebhookScale, scaleMarkdown } from './webhook-scale.js'
import { measureWebhooks, webhooksMarkdown } from './webhooks.js'

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    quick: { type: 'boolean', default: false },
    write: { type: 'boolean', default: false },
  },
})
// --quick is CI's smoke run: every row must run and print, its figures are no gate (one second each).
const duration = values.quick ? 1 : Number(values.duration)
const connections = Number(values.connections)
const dir = mkdtempSync(join(tmpdir(), 'petstore-bench-'))
const warmUp = values.quick ? 0.5 : 2
const { rows, measure, measureMixed } = createHarness({ duration, connections, warmUp })

async function seeded(count: number): Promise<{ path: string; auth: Auth }> {
  const path = join(dir, `pets-${count}.sqlite`)
  return { path, auth: { authorization: `Bearer ${await seedDatabase(path, count)}` } }
}

/**
 * listPets (limit=20), getPet over 100,000 ids and createPet (durable): each on the naive sketch, then at
 * once on the service, so that the pair compared shares the machine's state of the moment.
 */
async function operationRows(naive: ServerProcess, service: ServerProcess, auth: Auth) {
  await measure('naive-list', naive, listRequest(auth))
  await measure('listPets-limit20', service, listRequest(auth))
  await measure('naive-get', naive, getPetRequest(auth))
  await measure('getPet', service, getPetRequest(auth))
  await measure('naive-create', naive, createRequest(auth), 'WAL, synchronous=FULL')
  await measure('createPet', service, createRequest(auth), 'WAL, synchronous=FULL')
}

async function petstoreRows(): Promise<string> {
  const { path, auth } = await seeded(100_000)
  const { page, openapi } = await withServer(startService(path), async (server) => {
    const base = `http://127.0.0.1:${server.port}`
    const page = Buffer.from(await (await fetch(`${base}/v1/pets?limit=20`, { headers: auth })).arrayBuffer())
    return { page, openapi: await (await fetch(`${base}/v1/openapi.json`)).text() }
  })
  writeFileSync(join(dir, 'page.json'), page)
  await withServer(startTsScript('bench/ceiling.ts', [join(dir, 'page.json')]), (server) =>
    measure('ceiling', server, { path: '/' }),
  )
  const key = auth.authorization?.slice('Bearer '.length) ?? ''
  await withServer(startTsScript('bench/naive.ts', [path, key]), (naive) =>
    withServer(startService(path), async (server) => {
      await operationRows(naive, server, auth)
      await measure('listPets-limit100', server, listRequest(auth, 100))
      await measure('listPets-status', server, { path: '/v1/pets?status=available&limit=20', headers: auth })
      await measureMixed('listPets-mixed', server, listRequest(auth), createRequest(auth))
    }),
  )
  return openapi
}

async function competitorRows(openapi: string): Promise<void> {
  try {
    await withServer(startJsonServer(dir, 100_000), (server) =>
      measure('json-server-list', server, { path: '/pets?_limit=20' }),
    )
  } catch (error) {
    console.log(`json-server-list skipped: ${(error as Error).message.split('\n')[0]}`)
  }
  try {
    const headers = { authorization: 'Bearer ps_live_bench' }
    await withServer(startPrism(dir, openapi), (server) =>
      measure('prism-list', server, { path: '/pets?limit=20', headers }),
    )
  } catch (error) {
    console.log(`prism-list skipped: ${(error as Error).message.split('\n')[0]}`)
  }
}

async function scaleRows(): Promise<void> {
  for (const [label, count] of [
    ['1k', 1_000],
    ['100k', 100_000],
    ['1m', 1_000_000],
  ] as const) {
    const { path, auth } = await seeded(count)
    await withServer(startService(path), async (server) => {
      await measure(`listPets-${label}`, server, listRequest(auth))
      if (count !== 1_000_000) return
      let url = `http://127.0.0.1:${server.port}/v1/pets?limit=20`
      for (let page = 1; page < 1_000; page++) {
        const link = (await fetch(url, { headers: auth })).headers.get('link') ?? ''
        url = /<([^>]+)>/.exec(link)?.[1] ?? url
      }
      const page1000 = new URL(url)
      await measure('cursor-page1', server, listRequest(auth))
      await measure('cursor-page1000', server, { path: page1000.pathname + page1000.search, headers: auth })
      // Counts by status over the million (maintained counts, migration 0006; kept while nothing is written).
      await measure('inventory-1m', server, { path: '/v1/store/inventory', headers: auth })
    })
  }
}

try {
  const openapi = await petstoreRows()
  await competitorRows(openapi)
  await scaleRows()
  const webhooks = await measureWebhooks({
    dir,
    duration,
    connections,
    warmUp,
    lagSeconds: values.quick ? 2 : 10,
    rounds: values.quick ? 1 : 3,
  })
  const scale = await measureWebhookScale(sqliteStore(dir), { quick: values.quick })
  const traced = await seeded(10_000)
  const tracingRounds = values.quick ? 1 : 3
  const tracing = await measureTracing({
    databasePath: traced.path,
    auth: traced.auth,
    duration,
    connections,
    rounds: tracingRounds,
    warmUp,
  })
  const command = `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim()
  const info = machine()
  const settings = `${connections} connections, ${duration} s per row`
  const report = [
    markdown(rows, info, command, settings),
    webhooksMarkdown(webhooks),
    scaleMarkdown(scale),
    tracingMarkdown(tracing, tracingRounds),
  ].join('\n')
  console.log(`\n${report}`)
  if (!values.quick || values.write) {
    writeFileSync('bench/RESULTS.md', report)
    const results = { machine: info, command, rows, webhooks, webhookScale: scale, tracing }
    writeFileSync('bench/results.json', `${JSON.stringify(results, null, 2)}\n`)
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
