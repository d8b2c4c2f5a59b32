/**
 * What the rate limiter costs listPets: the full stack against the same stack with a store that admits
 * everything and counts nothing (headers are still written), alternating A/B rounds so drift on a shared machine hits both.
 * `npx tsx bench/limiter-cost.ts [--duration S] [--connections N] [--rounds R]`
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { type LoadResult, runLoad, type ServerProcess, seedDatabase, startTsScript } from './lib.js'

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
  },
})
const dir = mkdtempSync(join(tmpdir(), 'petstore-bench-'))
const databasePath = join(dir, 'bench.sqlite')
const key = await seedDatabase(databasePath, 10_000)

async function measure(server: ServerProcess): Promise<LoadResult> {
  return runLoad(server.child.pid ?? 0, {
    url: `http://127.0.0.1:${server.port}/v1/pets?limit=20`,
    headers: { authorization: `Bearer ${key}` },
    connections: Number(values.connections),
    duration: Number(values.duration),
  })
}

const withLimiter = await startTsScript('bench/server.ts', [databasePath])
const without = await startTsScript('bench/server.ts', [databasePath, '--no-limiter'])
try {
  await measure(withLimiter)
  await measure(without)
  const rows: string[] = []
  for (let round = 1; round <= Number(values.rounds); round++) {
    const a = await measure(withLimiter)
    const b = await measure(without)
    rows.push(
      `| ${round} | ${a.requestsPerSec.toFixed(0)} | ${b.requestsPerSec.toFixed(0)} | ${(a.requestsPerSec / b.requestsPerSec).toFixed(3)} | ${a.p99Ms} / ${b.p99Ms} |`,
    )
  }
  console.log('| round | with limiter req/s | without req/s | ratio | p99 ms with / without |')
  console.log('|---|---|---|---|---|')
  for (const row of rows) console.log(row)
} finally {
  await withLimiter.stop()
  await without.stop()
  rmSync(dir, { recursive: true, force: true })
}
