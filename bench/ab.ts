/**
 * What one part of the request path costs: the same requests against two servers that differ only in
 * that part, in alternating rounds so drift on a shared machine hits both.
 * `npx tsx bench/ab.ts --compare limiter|log [--path P] [--duration S] [--connections N] [--rounds R]`
 * - `limiter`: the full stack against the same stack with a store that admits everything and counts
 *   nothing (headers are still written): what the limiter's bookkeeping costs.
 * - `log`: LOG_LEVEL=info against LOG_LEVEL=warn: what the access log line costs.
 * - `baseline --baseline DIR`: this tree's `dist/main.js` against DIR's (another commit, checked out and
 *   built there, e.g. with `git worktree add`): what a change costs on the whole request path.
 * `--method POST` sends createPet's body to `--path /v1/pets`.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import {
  type LoadResult,
  runLoad,
  type ServerProcess,
  seedDatabase,
  startService,
  startTsScript,
} from './lib.js'

const { values } = parseArgs({
  options: {
    compare: { type: 'string', default: 'limiter' },
    path: { type: 'string', default: '/v1/pets?limit=20' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
    baseline: { type: 'string' },
    method: { type: 'string', default: 'GET' },
  },
})
const dir = mkdtempSync(join(tmpdir(), 'petstore-bench-'))
const databasePath = join(dir, 'bench.sqlite')
const key = await seedDatabase(databasePath, 10_000)

/** Keys of servers that run on a database of their own; the others use `key`. */
const keyOf = new Map<ServerProcess, string>()

/** The baseline on a database seeded by its own code (its migrations may differ from this tree's). */
async function startBaseline(tree: string): Promise<ServerProcess> {
  const path = join(dir, 'baseline.sqlite')
  const script = join(dir, 'seed-baseline.mts')
  const lib = JSON.stringify(join(tree, 'bench', 'lib.ts'))
  writeFileSync(
    script,
    `import { seedDatabase } from ${lib}\nconsole.log(await seedDatabase(${JSON.stringify(path)}, 10_000))\n`,
  )
  const output = execFileSync('npx', ['tsx', script], { cwd: tree, encoding: 'utf8' })
  const server = await startService(path, {}, join(tree, 'dist', 'main.js'))
  keyOf.set(server, output.trim().split('\n').at(-1) ?? '')
  return server
}

const PAIRS: Record<string, [label: string, start: () => Promise<ServerProcess>][]> = {
  baseline: [
    ['this tree', () => startService(databasePath)],
    ['baseline', () => startBaseline(values.baseline ?? '')],
  ],
  limiter: [
    ['with limiter', () => startTsScript('bench/server.ts', [databasePath])],
    ['without', () => startTsScript('bench/server.ts', [databasePath, '--no-limiter'])],
  ],
  log: [
    ['LOG_LEVEL=info', () => startTsScript('bench/server.ts', [databasePath], { LOG_LEVEL: 'info' })],
    ['LOG_LEVEL=warn', () => startTsScript('bench/server.ts', [databasePath], { LOG_LEVEL: 'warn' })],
  ],
}

async function measure(server: ServerProcess): Promise<LoadResult> {
  return runLoad(server.child.pid ?? 0, {
    url: `http://127.0.0.1:${server.port}${values.path}`,
    headers: { authorization: `Bearer ${keyOf.get(server) ?? key}`, 'content-type': 'application/json' },
    method: values.method as 'GET' | 'POST',
    ...(values.method === 'POST' && { body: JSON.stringify({ name: 'Bench', categoryId: 7 }) }),
    connections: Number(values.connections),
    duration: Number(values.duration),
  })
}

const pair = PAIRS[values.compare]
if (!pair) throw new Error(`--compare must be one of ${Object.keys(PAIRS).join(', ')}`)
if (values.compare === 'baseline' && !values.baseline)
  throw new Error('--compare baseline needs --baseline DIR')
const [[labelA, startA], [labelB, startB]] = pair as [(typeof pair)[0], (typeof pair)[0]]
const a = await startA()
const b = await startB()
try {
  await measure(a)
  await measure(b)
  console.log(`| round | ${labelA} req/s | ${labelB} req/s | ratio | p99 ms ${labelA} / ${labelB} |`)
  console.log('|---|---|---|---|---|')
  for (let round = 1; round <= Number(values.rounds); round++) {
    const resultA = await measure(a)
    const resultB = await measure(b)
    const ratio = (resultA.requestsPerSec / resultB.requestsPerSec).toFixed(3)
    console.log(
      `| ${round} | ${resultA.requestsPerSec.toFixed(0)} | ${resultB.requestsPerSec.toFixed(0)} | ${ratio} | ${resultA.p99Ms} / ${resultB.p99Ms} |`,
    )
  }
} finally {
  await a.stop()
  await b.stop()
  rmSync(dir, { recursive: true, force: true })
}
