import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { issueUnlimitedKey, killService, runCli, spawnService, waitUntilHealthy } from '../test/service-process.js'
import { startReceiver } from '../test/webhooks/harness.js'
import { type ReceivedSpan, startOtlpReceiver } from '../test/tracing/otlp-receiver.js'

const dir = mkdtempSync(join(tmpdir(), 'trace-sample-'))
const otlp = await startOtlpReceiver()
const seen = new Set<string>()
const hooks = await startReceiver((r) => { const id = String(r.headers['webhook-id']); if (seen.has(id)) return { status: 204 }; seen.add(id); return { status: 500 } })
const env: Record<string, string> = {
  DATABASE_URL: process.env.DATABASE_URL ?? `sqlite:${join(dir, 'p.sqlite')}`,
  ...(process.env.REDIS_URL && { REDIS_URL: process.env.REDIS_URL }),
  LOG_LEVEL: 'warn', PETSTORE_WEBHOOKS_ALLOW_PRIVATE: '1', PETSTORE_WEBHOOK_RETRY_SCALE: '0.0001',
  OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '50',
}
const { key } = await issueUnlimitedKey(env, dir)
const limited = JSON.parse((await runCli(['keys','create','--plan','enterprise','--per-minute','1','--per-day','9','--json'], env, dir)).stdout).key
const s = await spawnService(env); await waitUntilHealthy(s)
const base = `http://127.0.0.1:${s.port}`
const call = (p: string, body?: unknown, h: Record<string,string> = {}) => fetch(base + p, { method: body ? 'POST' : 'GET', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...h }, body: body ? JSON.stringify(body) : undefined })
await call('/v1/webhook_endpoints', { url: `http://127.0.0.1:${hooks.port}/hook`, events: ['pet.created'] })
await call('/v1/pets?limit=5')
await call('/v1/pets', { name: 'Rex', categoryId: 1, status: 'available' }, { 'idempotency-key': 'k1' })
await call('/v1/pets', { name: 'Rex', categoryId: 1, status: 'available' }, { 'idempotency-key': 'k1' })
await fetch(base + '/v1/pets', { headers: { authorization: `Bearer ${limited}` } })
await fetch(base + '/v1/pets', { headers: { authorization: `Bearer ${limited}` } })
await call('/v1/store/orders', { petId: 1 })
await new Promise((r) => setTimeout(r, 3000))
await killService(s)
const spans = otlp.spans
const label = (x: ReceivedSpan) => {
  const a = x.attributes
  const keep = Object.entries(a).filter(([k]) => !['url.path','http.request.method','fastify.root','db.system.name','http.route','hook.name','fastify.type','hook.callback.name'].includes(k))
  const attrs = keep.map(([k, v]) => `${k}=${typeof v === 'string' && v.length > 60 ? v.slice(0, 57) + '...' : v}`).join(' ')
  const links = x.links.length ? ` links→${x.links.map((l) => l.traceId.slice(0, 8) + '/' + l.spanId.slice(0, 8)).join(',')}` : ''
  return `${x.name} [${x.endMs - x.startMs} ms]${attrs ? ' ' + attrs : ''}${links}`
}
const print = (x: ReceivedSpan, depth: number) => { console.log(`${'  '.repeat(depth)}${depth ? '└ ' : ''}${label(x)}`); for (const c of spans.filter((y) => y.parentSpanId === x.spanId && y.traceId === x.traceId).sort((p, q) => p.startMs - q.startMs)) print(c, depth + 1) }
for (const root of spans.filter((x) => !x.parentSpanId || !spans.some((y) => y.spanId === x.parentSpanId)).sort((p, q) => p.startMs - q.startMs)) { console.log(`trace ${root.traceId.slice(0, 8)}`); print(root, 0); console.log() }
await otlp.close(); await hooks.close()
