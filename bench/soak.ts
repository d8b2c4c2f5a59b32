/**
 * npm run soak [-- --duration 60 --connections 40]: the service as `npm start` runs it, on loopback,
 * under mixed traffic from keys of every plan (Free and Pro keys driven over their limits) for a
 * warm-up of a quarter of `duration`, then `duration` seconds. Checks: zero 5xx, zero lost writes (every
 * 201 is in the database with its exact fields), every 429 with Retry-After, and memory not growing
 * after warm-up: the live heap and the RSS, each measured after a full collection (heap-check.ts) at
 * the end of the warm-up and at the end. Reports p50/p99 latency. Exits 1 when a check fails.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import SQLite from 'better-sqlite3'
import { type AfterGc, heapCheckEnv, measureAfterGc } from './heap-check.js'
import { startService } from './lib.js'
import type { RssSample } from './rss.js'
import { issueSoakKeys, type SoakKey } from './soak-keys.js'

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '60' },
    connections: { type: 'string', default: '40' },
  },
})
const duration = Number(values.duration)
const connections = Number(values.connections)

type Operation = 'list' | 'listStatus' | 'get' | 'create'
type Sent = {
  operation: Operation
  key: SoakKey
  body?: { name: string; categoryId: number; status: string }
}

const OPERATIONS: Operation[] = ['list', 'list', 'listStatus', 'get', 'create', 'create']
const STATUSES = ['available', 'pending', 'sold'] as const
const PLAN_WEIGHT: Record<SoakKey['plan'], number> = { enterprise: 20, business: 1, pro: 1, free: 1 }
const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T

const tally = { requests: 0, byStatus: new Map<number, number>(), limitedWithoutRetryAfter: 0 }
const acknowledged = new Map<number, Sent['body']>()
let sequence = 0

function setupRequest(keys: SoakKey[]) {
  // Most traffic from keys within their limits, the rest from Free and Pro keys driven over them.
  const weighted = keys.flatMap((key) => Array<SoakKey>(PLAN_WEIGHT[key.plan]).fill(key))
  return (request: autocannon.Request, context: object) => {
    const sent: Sent = { operation: pick(OPERATIONS), key: pick(weighted) }
    ;(context as { sent?: Sent }).sent = sent
    const headers = { authorization: `Bearer ${sent.key.key}`, 'content-type': 'application/json' }
    if (sent.operation === 'create') {
      sent.body = { name: `soak ${sequence++}`, categoryId: 1 + (sequence % 100), status: pick(STATUSES) }
      return {
        ...request,
        method: 'POST' as const,
        path: '/v1/pets',
        headers,
        body: JSON.stringify(sent.body),
      }
    }
    const path =
      sent.operation === 'get'
        ? `/v1/pets/${1 + Math.floor(Math.random() * 1000)}`
        : sent.operation === 'listStatus'
          ? `/v1/pets?status=${pick(STATUSES)}&limit=50`
          : '/v1/pets'
    return { ...request, method: 'GET' as const, path, headers, body: undefined }
  }
}

function onResponse(status: number, body: string, context: object, headers?: Record<string, unknown>) {
  tally.requests++
  tally.byStatus.set(status, (tally.byStatus.get(status) ?? 0) + 1)
  if (status === 429 && !headers?.['retry-after']) tally.limitedWithoutRetryAfter++
  const { sent } = context as { sent: Sent }
  if (status === 201 && sent.operation === 'create') acknowledged.set(JSON.parse(body).id, sent.body)
}

/** Acknowledged pets missing from the database or stored with other fields. */
function lostWrites(databasePath: string): number {
  const db = new SQLite(databasePath, { readonly: true })
  const find = db.prepare('SELECT name, category_id AS categoryId, status FROM pets WHERE id = ?')
  let lost = 0
  for (const [id, body] of acknowledged) {
    const row = find.get(id)
    if (JSON.stringify(row) !== JSON.stringify(body)) lost++
  }
  db.close()
  return lost
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-soak-'))
  const databasePath = join(dir, 'petstore.sqlite')
  const keys = await issueSoakKeys(databasePath)
  const server = await startService(databasePath, heapCheckEnv(dir))
  const pid = server.child.pid ?? 0
  const load = (seconds: number) =>
    autocannon({
      url: `http://127.0.0.1:${server.port}`,
      connections,
      duration: seconds,
      requests: [{ setupRequest: setupRequest(keys), onResponse }],
    })
  try {
    // A warm-up of a quarter of the run, measured, then the run itself: the measurement's pause (a heap
    // snapshot) stays out of the run's latencies.
    const warmUp = await load(Math.max(1, duration / 4))
    const warm = await measureAfterGc(pid, dir)
    const result = await load(duration)
    const end = await measureAfterGc(pid, dir)
    report(result, warmUp, { warm, end }, lostWrites(databasePath))
  } finally {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

type Memory = { warm: AfterGc; end: AfterGc }

function report(result: autocannon.Result, warmUp: autocannon.Result, memory: Memory, lost: number): void {
  const fiveXx = [...tally.byStatus]
    .filter(([status]) => status >= 500)
    .reduce((n, [, count]) => n + count, 0)
  const { warm, end } = memory
  const checks = {
    'no 5xx': fiveXx === 0 && result.errors + warmUp.errors + result.timeouts + warmUp.timeouts === 0,
    'no lost writes': lost === 0,
    'every 429 has Retry-After': tally.limitedWithoutRetryAfter === 0,
    'live heap not growing after warm-up': end.liveHeapMB <= warm.liveHeapMB * 1.1 + 4,
    'RSS not growing after warm-up': end.rss.anonymous <= warm.rss.anonymous * 1.1 + 16,
  }
  const mb = (value: number) => `${value.toFixed(0)} MB`
  console.log(`soak: ${duration} s (after a ${duration / 4} s warm-up), ${connections} connections`)
  console.log(`requests: ${result.requests.total} (${tally.requests} with the warm-up)`)
  console.log(`statuses: ${JSON.stringify(Object.fromEntries(tally.byStatus))}`)
  console.log(
    `5xx: ${fiveXx}, connection errors: ${result.errors + warmUp.errors}, timeouts: ${result.timeouts + warmUp.timeouts}`,
  )
  console.log(`writes acknowledged: ${acknowledged.size}, lost: ${lost}`)
  console.log(`429 without Retry-After: ${tally.limitedWithoutRetryAfter}`)
  console.log(
    `latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms`,
  )
  for (const [when, at] of [
    ['after warm-up', warm],
    ['at the end', end],
  ] as const) {
    const rss = (sample: RssSample) => `RSS ${mb(sample.total)} (anonymous ${mb(sample.anonymous)})`
    console.log(
      `${when}: before a full GC ${rss(at.rssBefore)}; after it, live heap ${mb(at.liveHeapMB)}, ${rss(at.rss)}`,
    )
  }
  for (const [check, passed] of Object.entries(checks)) console.log(`${passed ? 'ok  ' : 'FAIL'} ${check}`)
  if (Object.values(checks).includes(false)) process.exitCode = 1
}

await main()
