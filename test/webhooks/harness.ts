import { mkdtempSync, rmSync } from 'node:fs'
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'vitest'
import type { Clock } from '../../src/clock.js'
import { loadConfig } from '../../src/config.js'
import type { Db } from '../../src/db/database.js'
import type { Deps } from '../../src/deps.js'
import { type RunningServer, startServer } from '../../src/server.js'
import type { Resolve } from '../../src/webhooks/address.js'
import { createTestStores } from '../helpers.js'

/** One request a receiver got. */
export interface Received {
  /** The path posted to (with its query, if any). */
  url: string
  headers: IncomingHttpHeaders
  body: string
  at: number
  /** Requests to this receiver in flight when it arrived, itself included. */
  concurrent: number
}

export interface Answer {
  status: number
  headers?: Record<string, string>
  /** Waits this long before answering. */
  delayMs?: number
  /** Answers only once this has settled too: requests the test holds in flight for as long as it needs. */
  until?: Promise<unknown>
}

/** A real HTTP receiver on a loopback port: records every request and answers as `answer` says. */
export interface Receiver {
  port: number
  received: Received[]
  /** Requests being answered right now (the in-flight cap is read from it). */
  inFlight: number
  maxInFlight: number
  /** The requests in flight when `maxInFlight` was last raised: webhook-id, sender's port, ms since arrival. */
  atMax: string[]
  /** Times a request arrived while another with the same `webhook-id` was still being answered. */
  overlaps: number
  answer: (request: Received) => Answer
  /** Resolves once `count` requests (in all) arrived, or rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>
  close(): Promise<void>
}

/**
 * Counts a receiver's requests in flight: one arrives with its whole body and is over when answered, or when
 * its sender hung up first (a killed instance's request is not in flight), as soon as that is read rather than
 * at the response's `close`, a phase of the event loop later: after a stall, a request on another kept-alive
 * connection of the same sender was read in between and counted beside the one already given up (a CI run
 * counted 5 in flight where the senders had 4). `arrive` returns what ends it.
 */
function inFlightCounter(receiver: Receiver) {
  const answering = new Map<string, number>()
  const current = new Set<{ id: string; port: number | undefined; at: number }>()
  return function arrive(request: IncomingMessage, response: ServerResponse, at: number): () => void {
    receiver.inFlight++
    const id = String(request.headers['webhook-id'])
    const entry = { id, port: request.socket.remotePort, at }
    current.add(entry)
    if (receiver.inFlight > receiver.maxInFlight) {
      receiver.maxInFlight = receiver.inFlight
      receiver.atMax = [...current].map((e) => `${e.id} from :${e.port} since ${at - e.at} ms`)
    }
    if ((answering.get(id) ?? 0) > 0) receiver.overlaps++
    answering.set(id, (answering.get(id) ?? 0) + 1)
    const socket = request.socket
    let over = false
    const end = () => {
      if (over) return
      over = true
      socket.off('end', end)
      current.delete(entry)
      receiver.inFlight--
      answering.set(id, (answering.get(id) ?? 1) - 1)
    }
    socket.once('end', end)
    response.on('close', end)
    return end
  }
}

export async function startReceiver(answer: Receiver['answer'] = () => ({ status: 200 })): Promise<Receiver> {
  const waiters: { count: number; resolve: () => void }[] = []
  const receiver = {
    received: [],
    inFlight: 0,
    maxInFlight: 0,
    atMax: [],
    overlaps: 0,
    answer,
  } as unknown as Receiver
  const arrive = inFlightCounter(receiver)
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const at = Date.now()
      const end = arrive(request, response, at)
      const body = Buffer.concat(chunks).toString('utf8')
      const got = {
        url: request.url ?? '',
        headers: request.headers,
        body,
        at,
        concurrent: receiver.inFlight,
      }
      receiver.received.push(got)
      for (const waiter of waiters.filter((w) => receiver.received.length >= w.count)) waiter.resolve()
      const reply = receiver.answer(got)
      const answer = () => {
        end()
        if (!response.destroyed) response.writeHead(reply.status, reply.headers).end('ok')
      }
      const delayed = () => setTimeout(answer, reply.delayMs ?? 0)
      if (reply.until) reply.until.then(delayed, delayed)
      else delayed()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receiver.port = (server.address() as AddressInfo).port
  receiver.waitFor = (count, timeoutMs = 10_000) =>
    new Promise((resolve, reject) => {
      if (receiver.received.length >= count) return resolve(receiver.received)
      const timer = setTimeout(
        () =>
          reject(new Error(`${receiver.received.length} of ${count} deliveries arrived in ${timeoutMs} ms`)),
        timeoutMs,
      )
      waiters.push({
        count,
        resolve: () => {
          clearTimeout(timer)
          resolve(receiver.received)
        },
      })
    })
  receiver.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return receiver
}

/** A `pet.created` event row committed at `createdAt`, written straight to the table. */
export const eventRow = (createdAt: number) => ({
  type: 'pet.created',
  api_key_id: null,
  resource_version: 1,
  object: '{}',
  created_at: createdAt,
})

/** An enabled endpoint row, written straight to the table (past the API's 10 per account). */
export const endpointRow = (account: number, url: string, events: string, now: number) => ({
  api_key_id: account,
  url,
  events,
  status: 'enabled',
  secret: 'whsec_AA==',
  enabled_after_seq: 0,
  created_at: now,
})

/** Writes endpoint rows (`endpointRow`), 500 per statement. */
export async function insertEndpointRows(db: Db, rows: readonly ReturnType<typeof endpointRow>[]) {
  for (let start = 0; start < rows.length; start += 500) {
    await db
      .insertInto('webhook_endpoints')
      .values(rows.slice(start, start + 500))
      .execute()
  }
}

/**
 * `count` enabled endpoints of `account`, each with one attempt of one event (already fanned out) due at
 * `at`, written straight to the tables; their ids and the event's, in id order.
 */
export async function endpointsWithDueAttempts(db: Db, account: number, count: number, at: number) {
  await insertEndpointRows(
    db,
    Array.from({ length: count }, (_, n) => endpointRow(account, `https://e${n}.example/`, '["pet.*"]', at)),
  )
  const { seq } = await db
    .insertInto('events')
    .values({ ...eventRow(at), fanned_out: 1 })
    .returning('seq')
    .executeTakeFirstOrThrow()
  const ids = (await db.selectFrom('webhook_endpoints').select('id').orderBy('id').execute()).map(
    (row) => row.id,
  )
  const rows = ids.map((id) => ({
    event_seq: seq,
    endpoint_id: id,
    attempt: 1,
    status: 'pending',
    due_at: at,
    at,
  }))
  for (let from = 0; from < rows.length; from += 400)
    await db
      .insertInto('webhook_attempts')
      .values(rows.slice(from, from + 400))
      .execute()
  return { ids, seq }
}

/** Names under `.test` resolve to loopback: receivers get URLs like `http://hooks.test:PORT/`. */
export const loopbackResolve: Resolve = async (hostname) => {
  if (hostname.endsWith('.test')) return [{ address: '127.0.0.1', family: 4 }]
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
}

/** A fetch Response whose JSON body the tests read freely. */
// biome-ignore lint/suspicious/noExplicitAny: test bodies are checked by the assertions that read them
export type ApiResponse = Omit<Response, 'json'> & { json(): Promise<any> }

/**
 * Resolves once every event committed so far is fanned out: published (PostgreSQL's outbox empty) and its
 * attempts written, to every endpoint that takes it; or once no endpoint is enabled (events then wait, and
 * no attempt can be made). What an endpoint was not sent is then known from its delivery log, without
 * waiting a while to see that nothing comes.
 */
export async function everyEventFannedOut(app: Pick<WebhookApp, 'deps'>): Promise<void> {
  const { db } = app.deps.database
  const waiting = async () => {
    const count = (table: 'events' | 'event_outbox') =>
      db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n'))
    const enabled = await db
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'enabled')
      .executeTakeFirstOrThrow()
    if (Number(enabled.n) === 0) return 0
    const events = await count('events').where('fanned_out', '=', 0).executeTakeFirstOrThrow()
    const outbox = await count('event_outbox').executeTakeFirstOrThrow()
    return Number(events.n) + Number(outbox.n)
  }
  await expect.poll(waiting, { timeout: 10_000, interval: 20 }).toBe(0)
}

export interface WebhookApp {
  server: RunningServer
  /** `http://127.0.0.1:<port>`. */
  origin: string
  deps: Deps
  issueKey(scope?: 'read' | 'write'): Promise<string>
  /** fetch() on the app's API with a key. */
  api(
    key: string,
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<ApiResponse>
  close(): Promise<void>
}

/**
 * The service as `npm start` runs it (server.ts: the app and its webhook dispatcher) on fresh stores, with
 * private addresses allowed (receivers are on loopback), names under `.test` resolving to loopback and the
 * retry schedule compressed 1000 times. With `clock` (a FakeClock), due times and leases follow it on
 * SQLite: a test moves it past a moment and waits for `server.dispatcher.whenIdle()` to see that nothing
 * was sent before it.
 */
export async function startWebhookApp(
  options: { env?: Record<string, string>; resolve?: Resolve; clock?: Clock } = {},
): Promise<WebhookApp> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-webhooks-'))
  const stores = await createTestStores(dir)
  const config = loadConfig({
    ...stores.env,
    PORT: '0',
    LOG_LEVEL: 'silent',
    PETSTORE_DRAIN_SECONDS: '2',
    PETSTORE_WEBHOOKS_ALLOW_PRIVATE: '1',
    PETSTORE_WEBHOOK_RETRY_SCALE: '0.001',
    ...options.env,
  })
  const server = await startServer(config, {
    resolve: options.resolve ?? loopbackResolve,
    ...(options.clock && { clock: options.clock }),
  })
  const { deps } = server
  const origin = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`
  const limits = { perMinute: 1_000_000_000, perDay: 1_000_000_000 }
  return {
    server,
    origin,
    deps,
    issueKey: async (scope = 'write') =>
      (await deps.apiKeys.issueApiKey({ plan: 'enterprise', ...limits, scope })).key,
    api: (key, method, path, body, headers = {}) =>
      fetch(`${origin}/v1${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body !== undefined && { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    close: async () => {
      await server.close()
      await stores.drop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
