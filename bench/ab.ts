/**
 * What one part of the request path costs: the same requests against two servers that differ only in
 * that part, both started anew every round (their order turned each round) so drift on a shared machine
 * and a process's own luck hit both alike; it prints each round and the median ratio.
 * `npx tsx bench/ab.ts --compare limiter|log|baseline [--baseline DIR] [--path P] [--method M] [--duration S]
 * [--connections N] [--rounds R]`
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
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import {
  type LoadResult,
  median,
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

/** The baseline's database, seeded once by its own code (its migrations may differ from this tree's). */
let baselineSeeded: { path: string; key: string } | undefined

/** The baseline, on its own database. */
async function startBaseline(tree: string): Promise<ServerProcess> {
  if (!baselineSeeded) {
    const path = join(dir, 'baseline.sqlite')
    const script = join(dir, 'seed-baseline.mts')
    const lib = JSON.stringify(join(tree, 'bench', 'lib.ts'))
    writeFileSync(
      script,
      `import { seedDatabase } from ${lib}\nconsole.log(await seedDatabase(${JSON.stringify(path)}, 10_000))\n`,
    )
    const output = execFileSync('npx', ['tsx', script], { cwd: tree, encoding: 'utf8' })
    baselineSeeded = { path, key: output.trim().split('\n').at(-1) ?? '' }
  }
  const server = await startService(baselineSeeded.path, {}, join(tree, 'dist', 'main.js'))
  keyOf.set(server, baselineSeeded.key)
  return server
}

const PAIRS: Record<string, [label: string, start: () => Promise<ServerProcess>][]> = {
  baseline: [
    ['this tree', () => startService(databasePath)],
    ['baseline', () => startBaseline(resolve(values.baseline ?? ''))],
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

async function measure(server: ServerProcess, duration = Number(values.duration)): Promise<LoadResult> {
  return runLoad(server.child.pid ?? 0, {
    url: `http://127.0.0.1:${server.port}${values.path}`,
    headers: { authorization: `Bearer ${keyOf.get(server) ?? key}`, 'content-type': 'application/json' },
    method: values.method as 'GET' | 'POST',
    ...(values.method === 'POST' && { body: JSON.stringify({ name: 'Bench', categoryId: 7 }) }),
    connections: Number(values.connections),
    duration,
  })
}

const pair = PAIRS[values.compare]
if (!pair) throw new Error(`--compare must be one of ${Object.keys(PAIRS).join(', ')}`)
if (values.compare === 'baseline' && !values.baseline)
  throw new Error('--compare baseline needs --baseline DIR')
const [[labelA, startA], [labelB, startB]] = pair as [(typeof pair)[0], (typeof pair)[0]]
const WARM_UP_SECONDS = 2
/**
 * Both servers start anew every round (the first started turned each round), are warmed up and measured
 * once: a process keeps the speed it started with for its whole life, and identical ones differed by up to
 * 15 % (bench/tracing.ts), so one process per side would measure that luck once.
 */
const ratios: number[] = []
console.log(`| round | ${labelA} req/s | ${labelB} req/s | ratio | p99 ms ${labelA} / ${labelB} |`)
console.log('|---|---|---|---|---|')
try {
  for (let round = 1; round <= Number(values.rounds); round++) {
    const aFirst = round % 2 === 1
    const started: ServerProcess[] = []
    try {
      for (const start of aFirst ? [startA, startB] : [startB, startA]) started.push(await start())
      for (const server of started) await measure(server, WARM_UP_SECONDS)
      const results: LoadResult[] = []
      for (const server of started) results.push(await measure(server))
      const [resultA, resultB] = (aFirst ? results : [...results].reverse()) as [LoadResult, LoadResult]
      const ratio = resultA.requestsPerSec / resultB.requestsPerSec
      ratios.push(ratio)
      console.log(
        `| ${round} | ${resultA.requestsPerSec.toFixed(0)} | ${resultB.requestsPerSec.toFixed(0)} | ${ratio.toFixed(3)} | ${resultA.p99Ms} / ${resultB.p99Ms} |`,
      )
    } finally {
      await Promise.all(started.map((server) => server.stop()))
    }
  }
  console.log(`\nmedian ratio ${labelA} ÷ ${labelB}: ${median(ratios).toFixed(3)}`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
