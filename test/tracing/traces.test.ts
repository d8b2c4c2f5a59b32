import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { hashApiKey } from '../../src/api-keys/api-keys.format.js'
import { loadConfig } from '../../src/config.js'
import { connectDatabase } from '../../src/db/connect.js'
import { createTestStores, onServices, type TestStores } from '../helpers.js'
import {
  issueUnlimitedKey,
  killService,
  logLine,
  runCli,
  type Service,
  spawnService,
  waitUntilHealthy,
} from '../service-process.js'
import { type Receiver, startReceiver } from '../webhooks/harness.js'
import {
  childrenOf,
  descendantsOf,
  type OtlpReceiver,
  type ReceivedSpan,
  startOtlpReceiver,
} from './otlp-receiver.js'

/**
 * The spans the service sends to a real OTLP/HTTP receiver, from a real process: one SERVER span per
 * request named by its route, the statements, the limiter, the idempotency claim, the group commit and
 * the caches under it, and webhook fan-out and attempts linked to the change that emitted the event.
 * `npm test` runs it on SQLite, `npm run test:services` on PostgreSQL and Redis.
 */

const SERVER = 2
const CLIENT = 3
const ERROR = 2

let dir: string
let stores: TestStores
let otlp: OtlpReceiver
let webhooks: Receiver
let service: Service
let key: string
const base = () => `http://127.0.0.1:${service.port}`

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-traces-'))
  stores = await createTestStores(dir)
  otlp = await startOtlpReceiver()
  // The first attempt of every event to each path fails with 500, the retry succeeds.
  const seen = new Set<string>()
  webhooks = await startReceiver((request) => {
    const id = `${request.url} ${String(request.headers['webhook-id'])}`
    if (seen.has(id)) return { status: 204 }
    seen.add(id)
    return { status: 500 }
  })
  const env = {
    ...stores.env,
    LOG_LEVEL: 'info',
    PETSTORE_WEBHOOKS_ALLOW_PRIVATE: '1',
    PETSTORE_WEBHOOK_RETRY_SCALE: '0.0001',
    // The public surface's 429 at the second request without a key in a minute (nothing else here sends one).
    PETSTORE_PUBLIC_PER_MINUTE: '1',
    // The default protocol, OTLP/protobuf (test/tracing/otlp-receiver.ts decodes it).
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_BSP_SCHEDULE_DELAY: '50',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
  }
  ;({ key } = await issueUnlimitedKey(env, dir))
  service = await spawnService(env)
  await waitUntilHealthy(service)
})
afterAll(async () => {
  if (service) await killService(service)
  await otlp?.close()
  await webhooks?.close()
  await stores?.drop()
  rmSync(dir, { recursive: true, force: true })
})

function call(
  path: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
) {
  return fetch(`${base()}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      authorization: `Bearer ${key}`,
      ...(init.body !== undefined && { 'content-type': 'application/json' }),
      ...init.headers,
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  })
}

/** The SERVER span of the request that answered with `requestId` (its `x-request-id`). */
async function serverSpanOf(response: Response): Promise<ReceivedSpan> {
  const requestId = response.headers.get('x-request-id')
  const line = await logLine(service, (entry) => entry.reqId === requestId && 'trace_id' in entry)
  const spans = await otlp.waitFor((all) =>
    all.some((span) => span.spanId === line.span_id && span.traceId === line.trace_id),
  )
  const span = spans.find((candidate) => candidate.spanId === line.span_id)
  if (!span) throw new Error('unreachable')
  expect(span.kind).toBe(SERVER)
  return span
}

/** Waits until the trace of `root` has a span named `name` under it. */
async function underWhenThere(root: ReceivedSpan, name: string): Promise<ReceivedSpan[]> {
  await otlp.waitFor((all) => descendantsOf(all, root).some((span) => span.name === name))
  return descendantsOf(otlp.spans, root)
}

describe('requests', () => {
  test('listPets: one SERVER span named by its route, honouring traceparent, the caller and every statement under it', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
    const parent = '00f067aa0ba902b7'
    const response = await call('/v1/pets?limit=5&status=available', {
      headers: { traceparent: `00-${traceId}-${parent}-01` },
    })
    expect(response.status).toBe(200)
    const span = await serverSpanOf(response)
    expect(span.name).toBe('GET /v1/pets')
    expect(span.traceId).toBe(traceId)
    expect(span.parentSpanId).toBe(parent)
    expect(span.service).toBe('petstore')
    expect(span.resource['deployment.environment.name']).toBe('test')
    expect(span.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/v1/pets',
      'url.path': '/v1/pets',
      'http.response.status_code': 200,
      'petstore.plan': 'enterprise',
      'petstore.rate_limit.decision': 'allowed',
    })
    expect(span.attributes['petstore.key.id']).toEqual(expect.any(Number))
    expect(span.attributes['petstore.account.id']).toBe(span.attributes['petstore.key.id'])
    const servers = otlp.spans.filter((other) => other.traceId === traceId && other.kind === SERVER)
    expect(servers).toHaveLength(1)
    const below = await underWhenThere(span, 'cache pet page')
    const page = below.find((child) => child.name === 'cache pet page')
    expect(page?.attributes['petstore.cache.hit']).toBe(false)
    const statements = below.filter((child) => child.attributes['db.query.text'] !== undefined)
    const system = onServices ? 'postgresql' : 'sqlite'
    expect(statements.map((statement) => statement.name)).toContain('SELECT pets')
    for (const statement of statements) {
      expect(statement.attributes['db.system.name']).toBe(system)
      // Values are parameters: the status asked for is nowhere in the text.
      expect(String(statement.attributes['db.query.text'])).not.toContain('available')
    }
    if (onServices) {
      const limiter = below.find((child) => child.name === 'redis rate-limit')
      expect(limiter).toMatchObject({ kind: CLIENT, attributes: { 'db.system.name': 'redis' } })
    }
  })

  test('a path with an id is named by its route template, never by the id', async () => {
    const created = await call('/v1/pets', { method: 'POST', body: { name: 'Named', categoryId: 1 } })
    const { id } = (await created.json()) as { id: number }
    const got = await call(`/v1/pets/${id}`)
    expect(got.status).toBe(200)
    const span = await serverSpanOf(got)
    expect(span.name).toBe('GET /v1/pets/:petId')
    expect(span.attributes['http.route']).toBe('/v1/pets/:petId')
  })

  test.skipIf(onServices)(
    'a page read again unchanged is a cache hit, with no statement under it (SQLite)',
    async () => {
      const page = () => call('/v1/pets?limit=7')
      await serverSpanOf(await page())
      // A write between the two (the key's usage, flushed every 5 s) would make the second a miss:
      // three tries.
      const hits: unknown[] = []
      for (let attempt = 0; attempt < 3 && !hits.includes(true); attempt++) {
        const span = await serverSpanOf(await page())
        const below = await underWhenThere(span, 'cache pet page')
        const cache = below.find((child) => child.name === 'cache pet page')
        hits.push(cache?.attributes['petstore.cache.hit'])
        if (cache?.attributes['petstore.cache.hit'] === true)
          expect(below.filter((child) => child.attributes['db.query.text'] !== undefined)).toEqual([])
      }
      expect(hits).toContain(true)
    },
  )

  test('createPet with an Idempotency-Key: the claim, then its replay; without one, the group commit', async () => {
    const body = { name: 'Traced', categoryId: 1 }
    const headers = { 'idempotency-key': 'trace-1' }
    const first = await call('/v1/pets', { method: 'POST', body, headers })
    expect(first.status).toBe(201)
    const created = await serverSpanOf(first)
    expect(created.name).toBe('POST /v1/pets')
    const claim = (await underWhenThere(created, 'idempotency claim')).find(
      (span) => span.name === 'idempotency claim',
    )
    expect(claim?.attributes['petstore.idempotency.outcome']).toBe('claimed')
    expect(childrenOf(otlp.spans, claim as ReceivedSpan).map((span) => span.name)).toContain(
      'INSERT idempotency_keys',
    )

    const again = await call('/v1/pets', { method: 'POST', body, headers })
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    const replay = (await underWhenThere(await serverSpanOf(again), 'idempotency claim')).find(
      (span) => span.name === 'idempotency claim',
    )
    expect(replay?.attributes['petstore.idempotency.outcome']).toBe('replayed')

    const grouped = await call('/v1/pets', { method: 'POST', body: { name: 'Grouped', categoryId: 1 } })
    expect(grouped.status).toBe(201)
    const commit = (await underWhenThere(await serverSpanOf(grouped), 'group commit')).find(
      (span) => span.name === 'group commit',
    )
    expect(commit?.attributes['petstore.group_commit.size']).toBeGreaterThanOrEqual(1)
  })

  test('a 429: the SERVER span says the limiter refused, for which key and plan', async () => {
    const limits = ['--per-minute', '1', '--per-day', '100']
    const run = await runCli(['keys', 'create', '--plan', 'enterprise', ...limits, '--json'], stores.env, dir)
    const limited = JSON.parse(run.stdout) as { id: number; key: string }
    const headers = { authorization: `Bearer ${limited.key}` }
    expect((await fetch(`${base()}/v1/pets`, { headers })).status).toBe(200)
    const refused = await fetch(`${base()}/v1/pets`, { headers })
    expect(refused.status).toBe(429)
    const span = await serverSpanOf(refused)
    expect(span.attributes).toMatchObject({
      'http.response.status_code': 429,
      'petstore.key.id': limited.id,
      'petstore.rate_limit.decision': 'limited',
    })
    // A 4xx is the client's: the SERVER span is not an error (HTTP semantic conventions).
    expect(span.status.code ?? 0).toBe(0)
    // Under it: the key's lookup and, on Redis, the limiter's call; never the handler nor its statements.
    const below = await underWhenThere(span, onServices ? 'redis rate-limit' : 'cache api key')
    expect(below.map((child) => child.name)).toContain('cache api key')
    if (onServices) expect(below.find((child) => child.name === 'redis rate-limit')?.kind).toBe(CLIENT)
    expect(below.filter((child) => child.name.startsWith('handler') || child.name === 'SELECT pets')).toEqual(
      [],
    )
  })

  test('a 429 of the public surface (no key, limited per client IP): its SERVER span says the limiter refused', async () => {
    const openApi = () => fetch(`${base()}/v1/openapi.json`)
    const allowed = await openApi()
    expect(allowed.status).toBe(200)
    expect((await serverSpanOf(allowed)).attributes['petstore.rate_limit.decision']).toBe('allowed')
    // One a minute: the next is refused (or the one after it, should a minute begin in between).
    let refused = await openApi()
    if (refused.status === 200) refused = await openApi()
    expect(refused.status).toBe(429)
    const span = await serverSpanOf(refused)
    expect(span.attributes).toMatchObject({
      'http.response.status_code': 429,
      'petstore.rate_limit.decision': 'limited',
    })
    expect(span.attributes['petstore.key.id']).toBeUndefined()
    expect(span.status.code ?? 0).toBe(0)
  })

  test('placeOrder: the order, its pet and its events written in the statements under one span', async () => {
    const pet = (await (
      await call('/v1/pets', { method: 'POST', body: { name: 'Sold', categoryId: 1, status: 'available' } })
    ).json()) as { id: number }
    const placed = await call('/v1/store/orders', { method: 'POST', body: { petId: pet.id } })
    expect(placed.status).toBe(201)
    const span = await serverSpanOf(placed)
    expect(span.name).toBe('POST /v1/store/orders')
    const below = await underWhenThere(span, 'INSERT orders')
    expect(below.map((child) => child.name)).toEqual(expect.arrayContaining(['UPDATE pets', 'INSERT orders']))
  })
})

describe('work shared by several requests', () => {
  /** A caller's trace context that its sampler (parent-based, here) keeps out. */
  const sampledOut = { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-00` }
  const hasChild = (span: ReceivedSpan, name: string) =>
    childrenOf(otlp.spans, span).some((child) => child.name === name)

  test('a group commit flushed by a request sampled out still has its statements in the traced one’s trace', async () => {
    // Eight creates sampled out arrive first, then a traced one: their group commit is scheduled by one of
    // the eight. Until a round puts the traced one in a shared transaction.
    for (let round = 0; round < 5; round++) {
      const untraced = Array.from({ length: 8 }, () =>
        call('/v1/pets', { method: 'POST', body: { name: 'Untraced', categoryId: 1 }, headers: sampledOut }),
      )
      const traced = await call('/v1/pets', { method: 'POST', body: { name: 'Shared', categoryId: 1 } })
      await Promise.all(untraced)
      const commit = (await underWhenThere(await serverSpanOf(traced), 'group commit')).find(
        (span) => span.name === 'group commit',
      ) as ReceivedSpan
      if (Number(commit.attributes['petstore.group_commit.size']) < 2) continue
      await underWhenThere(commit, 'INSERT pets')
      expect(hasChild(commit, 'INSERT pets')).toBe(true)
      return
    }
    throw new Error('no round put the traced create in a transaction it shared')
  })

  test.runIf(onServices)(
    'reads of one turn answered by one statement: every traced request has it under its span or a link to it',
    async () => {
      const ids: number[] = []
      for (let n = 0; n < 10; n++) {
        const response = await call('/v1/pets', {
          method: 'POST',
          body: { name: `Batched ${n}`, categoryId: 1 },
        })
        ids.push(((await response.json()) as { id: number }).id)
      }
      const responses = await Promise.all(ids.map((id) => call(`/v1/pets/${id}`)))
      const misses: ReceivedSpan[] = []
      for (const response of responses) {
        expect(response.status).toBe(200)
        const below = await underWhenThere(await serverSpanOf(response), 'cache pet')
        misses.push(
          ...below.filter(
            (span) => span.name === 'cache pet' && span.attributes['petstore.cache.hit'] === false,
          ),
        )
      }
      expect(misses.length).toBeGreaterThan(1)
      await otlp.waitFor((all) => all.some((span) => span.name === 'SELECT pets'))
      for (const miss of misses) {
        const shared = miss.links.map((link) => otlp.spans.find((span) => span.spanId === link.spanId))
        expect([miss, ...shared].some((span) => span !== undefined && hasChild(span, 'SELECT pets'))).toBe(
          true,
        )
      }
    },
  )
})

describe('webhooks', () => {
  test('the fan-out and both attempts of a retried delivery link to the create that emitted the event', async () => {
    const subscribe = async (path: string) => {
      const subscribed = await call('/v1/webhook_endpoints', {
        method: 'POST',
        body: { url: `http://127.0.0.1:${webhooks.port}${path}`, events: ['pet.created'] },
      })
      expect(subscribed.status).toBe(201)
      return ((await subscribed.json()) as { id: string }).id
    }
    const endpointId = await subscribe('/hook')
    // A second subscriber: the fan-out writes two attempts, in one statement's span.
    await subscribe('/also')
    const created = await call('/v1/pets', { method: 'POST', body: { name: 'Announced', categoryId: 1 } })
    const pet = (await created.json()) as { id: number }
    const cause = await serverSpanOf(created)
    const linked = (span: ReceivedSpan) =>
      span.links.some((link) => link.traceId === cause.traceId && link.spanId !== '')
    const attemptOfIt = (span: ReceivedSpan) => span.name === 'webhook attempt' && linked(span)
    const ours = (span: ReceivedSpan) =>
      attemptOfIt(span) && span.attributes['petstore.webhook.endpoint.id'] === endpointId
    // Two attempts to each endpoint.
    const spans = await otlp.waitFor((all) => all.filter(attemptOfIt).length >= 4, 30_000)
    const fanOut = spans.find((span) => span.name === 'webhook fan-out' && linked(span))
    expect(fanOut?.attributes['petstore.fan_out.attempts']).toBeGreaterThanOrEqual(2)
    // However many attempts a fan-out writes, their INSERT is one span (SQLite runs it once a row).
    const inserts = descendantsOf(spans, fanOut as ReceivedSpan).filter(
      (span) => span.name === 'INSERT webhook_attempts',
    )
    expect(inserts).toHaveLength(1)
    if (!onServices) expect(inserts[0]?.attributes['db.operation.batch.size']).toBe(2)
    const attempts = spans
      .filter(ours)
      .sort(
        (a, b) =>
          Number(a.attributes['petstore.webhook.attempt']) - Number(b.attributes['petstore.webhook.attempt']),
      )
    // The ids partners see: the event's is the `webhook-id` header /hook got (twice), the endpoint's `we_…`.
    const delivered = webhooks.received.filter(
      (got) => got.url === '/hook' && JSON.parse(got.body).data.object.id === pet.id,
    )
    expect(delivered).toHaveLength(2)
    const eventId = delivered[0]?.headers['webhook-id']
    expect(eventId).toMatch(/^evt_/)
    expect(delivered[1]?.headers['webhook-id']).toBe(eventId)
    // The fan-out says which events it looked at, by the number in their ids.
    const seq = Number(String(eventId).slice('evt_'.length))
    expect(fanOut?.attributes['petstore.fan_out.first_event_seq']).toBeLessThanOrEqual(seq)
    expect(fanOut?.attributes['petstore.fan_out.last_event_seq']).toBeGreaterThanOrEqual(seq)
    expect(endpointId).toMatch(/^we_[1-9][0-9]*$/)
    expect(attempts.map((span) => span.attributes)).toEqual([
      expect.objectContaining({
        'petstore.event.id': eventId,
        'petstore.event.type': 'pet.created',
        'petstore.webhook.endpoint.id': endpointId,
        'petstore.webhook.attempt': 1,
        'http.response.status_code': 500,
      }),
      expect.objectContaining({
        'petstore.event.id': eventId,
        'petstore.webhook.attempt': 2,
        'http.response.status_code': 204,
      }),
    ])
    expect(attempts[0]).toMatchObject({ kind: CLIENT, status: { code: ERROR } })
    for (const attempt of attempts) {
      // The receiver's host and port, never the URL's path (it may carry a token); the attempt's duration.
      expect(attempt.attributes['server.address']).toBe('127.0.0.1')
      expect(attempt.attributes['server.port']).toBe(webhooks.port)
      expect(attempt.attributes['petstore.webhook.duration_ms']).toEqual(expect.any(Number))
      // Linked to a span of the change's request (the one active when it wrote), not only to its trace.
      const link = attempt.links.find((candidate) => candidate.traceId === cause.traceId)
      const linkedSpan = otlp.spans.find((span) => span.spanId === link?.spanId)
      expect(
        linkedSpan === cause || descendantsOf(otlp.spans, cause).includes(linkedSpan as ReceivedSpan),
      ).toBe(true)
    }
    // Each attempt is a trace of its own (hours of retries are not one trace), tied by its link.
    expect(new Set(attempts.map((span) => span.traceId)).size).toBe(2)
    expect(attempts.every((span) => span.traceId !== cause.traceId)).toBe(true)
  })
})

describe('events', () => {
  test('each change keeps its own trace context on its events: a pet patched and deleted, an order placed and approved; none when its caller sampled it out', async () => {
    const create = async (name: string) => {
      const response = await call('/v1/pets', {
        method: 'POST',
        body: { name, categoryId: 1, status: 'available' },
      })
      return ((await response.json()) as { id: number }).id
    }
    /** A caller's trace of its own for each change, sampled unless `flags` says otherwise. */
    const caller = '00f067aa0ba902b7'
    const traced = (traceId: string, flags = '01') => ({ traceparent: `00-${traceId}-${caller}-${flags}` })
    const [patched, deleted, placed, approved, untraced] = ['1', '2', '3', '4', '5'].map((digit) =>
      digit.repeat(32),
    ) as [string, string, string, string, string]

    const changed = await create('Changed')
    const patch = { method: 'PATCH', body: { name: 'Renamed' } }
    expect((await call(`/v1/pets/${changed}`, { ...patch, headers: traced(patched) })).status).toBe(200)
    expect((await call(`/v1/pets/${changed}`, { method: 'DELETE', headers: traced(deleted) })).status).toBe(
      204,
    )
    const ordered = await create('Ordered')
    const order = await call('/v1/store/orders', {
      method: 'POST',
      body: { petId: ordered },
      headers: traced(placed),
    })
    expect(order.status).toBe(201)
    const orderId = ((await order.json()) as { id: number }).id
    const approve = { method: 'PATCH', body: { status: 'approved' }, headers: traced(approved) }
    expect((await call(`/v1/store/orders/${orderId}`, approve)).status).toBe(200)
    const quiet = await create('Quiet')
    const sampledOut = { ...patch, headers: traced(untraced, '00') }
    expect((await call(`/v1/pets/${quiet}`, sampledOut)).status).toBe(200)

    // The context of the change's own span: its caller's trace, one of our spans in it.
    const of = (traceId: string) =>
      expect.stringMatching(new RegExp(`^00-${traceId}-(?!${caller})[0-9a-f]{16}-01$`))
    const expected = {
      [`pet.updated ${changed}`]: of(patched),
      [`pet.deleted ${changed}`]: of(deleted),
      [`order.placed ${orderId}`]: of(placed),
      [`pet.updated ${ordered}`]: of(placed),
      [`order.approved ${orderId}`]: of(approved),
      [`pet.updated ${quiet}`]: null,
    }
    const handle = await connectDatabase(loadConfig({ DATABASE_URL: stores.env.DATABASE_URL }).database)
    try {
      /** Each event of these objects, by its type and object id (on PostgreSQL once published). */
      const stored = async () => {
        const rows = await handle.db.selectFrom('events').select(['type', 'object', 'trace_parent']).execute()
        const byEvent: Record<string, string | null> = {}
        for (const row of rows) {
          const key = `${row.type} ${(JSON.parse(row.object) as { id: number }).id}`
          if (key in expected) byEvent[key] = row.trace_parent
        }
        return byEvent
      }
      await expect.poll(async () => Object.keys(await stored()).length, { timeout: 10_000 }).toBe(6)
      expect(await stored()).toEqual(expected)
    } finally {
      await handle.close()
    }
  })
})

test('the probes are not traced, whatever query follows them', async () => {
  expect((await fetch(`${base()}/healthz?probe=1`)).status).toBe(200)
  expect((await fetch(`${base()}/readyz?probe=1`)).status).toBe(200)
  // Spans are exported in the order they end: one that ended after the probes marks that theirs came.
  await serverSpanOf(await call('/v1/pets?limit=1'))
  const probes = otlp.spans.filter((span) => /^\/(healthz|readyz)/.test(String(span.attributes['url.path'])))
  expect(probes).toEqual([])
})

test('no API key, key hash or webhook secret is in any span, attribute or resource', async () => {
  // A key sent where it does not belong, as a client's mistake would: in the path (plain and
  // percent-encoded), as a body's field name, in the query; each answered with a 4xx whose error says why.
  // And a webhook signing secret pasted into the path, as it is and percent-encoded (its `+`, `/`, `=`).
  const encoded = key.replaceAll('_', '%5F')
  const secret = 'whsec_Q2xpZW50+U2VjcmV0/c2lnbmluZ3M='
  const misplaced = [
    await call(`/v1/nothing/${key}`),
    await call(`/v1/pets/${key}`),
    await call(`/v1/nothing/${encoded}`),
    await call('/v1/pets', { method: 'POST', body: { name: 'Keyed', categoryId: 1, [key]: 1 } }),
    await call(`/v1/pets?token=${key}`),
    await call(`/v1/nothing/${secret}`),
    await call(`/v1/nothing/${encodeURIComponent(secret)}`),
  ]
  expect(misplaced.map((response) => response.status)).toEqual([404, 400, 404, 400, 200, 404, 404])
  const sent = [...misplaced, await call('/v1/pets')]
  // Every request's SERVER span exported, the last one's too: it ends after its children, and spans are
  // exported in the order they end, so the search below covers every span of every request sent.
  for (const response of sent) await serverSpanOf(response)
  // Every byte as exported (protobuf keeps strings as UTF-8), and every value as decoded.
  const exported = otlp.raw.map((body) => body.toString('utf8')).join('\n')
  const decoded = JSON.stringify(otlp.spans)
  // The search reaches the attributes the guard writes (the key's id, never the key).
  expect(decoded).toContain('petstore.key.id')
  for (const everything of [exported, decoded]) {
    expect(everything).not.toMatch(/ps_(live|test)_[A-Za-z0-9_-]{20,}/)
    expect(everything).not.toContain(key.slice(8))
    // The key's hash as the database keeps it.
    expect(everything).not.toContain(hashApiKey(key))
    expect(everything).not.toMatch(/whsec_[A-Za-z0-9+/=]{10,}/)
    for (const part of ['Q2xpZW50', 'U2VjcmV0', 'c2lnbmluZ3M']) expect(everything).not.toContain(part)
  }
  // Nor any other SHA-256 written in hex (the decoded values are quoted apart: ids are 32 and 16 long).
  expect(decoded).not.toMatch(/[0-9a-f]{64}/)
})
