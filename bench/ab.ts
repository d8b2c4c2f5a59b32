/**
 * What one part of the request path costs: the same requests against two servers that differ only in
 * that part, in alternating rounds so drift on a shared machine hits both.
 * `npx tsx bench/ab.ts --compare limiter|log [--path P] [--duration S] [--connections N] [--rounds R]`
 * - `limiter`: the full stack against the same stack with a store that admits everything and counts
 *   nothing (headers are still written): what the limiter's bookkeeping costs.
 * - `log`: LOG_LEVEL=info against LOG_LEVEL=warn: what the access log line costs.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { type LoadResult, runLoad, type ServerProcess, seedDatabase, startTsScript } from './lib.js'

const { values } = parseArgs({
  options: {
    compare: { type: 'string', default: 'limiter' },
    path: { type: 'string', default: '/v1/pets?limit=20' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
  },
})
const dir = mkdtempSync(join(tmpdir(), 'petstore-bench-'))
const databasePath = join(dir, 'bench.sqlite')
const key = await seedDatabase(databasePath, 10_000)

const PAIRS: Record<string, [label: string, start: () => Promise<ServerProcess>][]> = {
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
    headers: { authorization: `Bearer ${key}` },
    connections: Number(values.connections),
    duration: Number(values.duration),
  })
}

const pair = PAIRS[values.compare]
if (!pair) throw new Error(`--compare must be one of ${Object.keys(PAIRS).join(', ')}`)
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
