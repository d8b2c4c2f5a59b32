import { createServer, type Server, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { MAX_IN_FLIGHT_PER_ENDPOINT } from '../../src/webhooks/attempts.repository.js'
import { type Receiver, startReceiver, startWebhookApp, type WebhookApp } from './harness.js'

/**
 * Partners are isolated (CONTRACT §14, round 4): one account's endpoints, however slow, hung or failing,
 * never hold back another account's deliveries; an endpoint that keeps failing gets one request at a time.
 */

let t: WebhookApp | undefined
const closers: (() => Promise<void>)[] = []

afterEach(async () => {
  await t?.close()
  t = undefined
  await Promise.all(closers.splice(0).map((close) => close()))
})

/** A server that accepts every connection and never answers: each connection is one hung request. */
async function startHungServer(): Promise<{ port: number; connections: number }> {
  const sockets = new Set<Socket>()
  const hung = { port: 0, connections: 0 }
  const server: Server = createServer((socket) => {
    hung.connections++
    sockets.add(socket)
    socket.on('error', () => {})
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  hung.port = (server.address() as { port: number }).port
  closers.push(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => server.close(resolve))
  })
  return hung
}

async function receiver(answer?: Receiver['answer']): Promise<Receiver> {
  const started = await startReceiver(answer)
  closers.push(() => started.close())
  return started
}

/** The value of one sample of the app's /metrics, e.g. `petstore_webhook_in_flight{account="1"}`. */
async function metric(app: WebhookApp, sample: string): Promise<number | undefined> {
  const text = await (await fetch(`${app.origin}/metrics`)).text()
  const line = text.split('\n').find((row) => row.startsWith(`${sample} `))
  return line === undefined ? undefined : Number(line.slice(sample.length + 1))
}

async function subscribe(app: WebhookApp, key: string, url: string): Promise<{ id: string }> {
  const response = await app.api(key, 'POST', '/webhook_endpoints', { url, events: ['pet.*'] })
  expect(response.status).toBe(201)
  return response.json()
}

describe('partners are isolated', () => {
  it("delivers everything to one account while another's 10 endpoints hang until the timeout", async () => {
    // Attempts to the hung server end only after 30 s: everything below happens while all of them hang.
    t = await startWebhookApp({ env: { PETSTORE_WEBHOOK_TIMEOUT_MS: '30000' } })
    const hung = await startHungServer()
    const fast = await receiver()
    const a = await t.issueKey()
    const b = await t.issueKey()
    for (let index = 0; index < 10; index++) await subscribe(t, a, `http://hung.test:${hung.port}/a${index}`)
    for (let index = 0; index < 3; index++) await subscribe(t, b, `http://hooks.test:${fast.port}/b${index}`)
    for (let index = 0; index < 100; index++) {
      expect((await t.api(b, 'POST', '/pets', { name: `P${index}`, categoryId: 1 })).status).toBe(201)
    }
    // Account B's 300 deliveries all arrive while account A's 40 requests (4 per endpoint) still hang.
    await fast.waitFor(300, 20_000)
    expect(hung.connections).toBe(40)
    // ...and are written down as succeeded meanwhile.
    const { db } = t.deps.database
    const succeeded = async () =>
      Number(
        (
          await db
            .selectFrom('webhook_attempts')
            .select((eb) => eb.fn.countAll<number>().as('count'))
            .where('status', '=', 'succeeded')
            .executeTakeFirstOrThrow()
        ).count,
      )
    await expect.poll(succeeded, { timeout: 5_000 }).toBe(300)
    expect(hung.connections).toBe(40)
    // The metrics show who holds the requests in flight.
    const accountA = (await t.deps.apiKeys.verifyApiKey(a)).id
    const accountB = (await t.deps.apiKeys.verifyApiKey(b)).id
    expect(await metric(t, `petstore_webhook_in_flight{account="${accountA}"}`)).toBe(40)
    expect(await metric(t, `petstore_webhook_in_flight{account="${accountB}"}`)).toBeUndefined()
    expect(await metric(t, 'petstore_webhook_outbox_depth')).toBe(0)
  }, 60_000)

  it('sends one request at a time to an endpoint that failed 5 times in a row, and 4 again after a success', async () => {
    t = await startWebhookApp()
    let failing = true
    const slow = await receiver(() => ({ status: failing ? 500 : 200, delayMs: 100 }))
    const key = await t.issueKey()
    await subscribe(t, key, `http://hooks.test:${slow.port}/in`)
    for (let index = 0; index < 30; index++)
      await t.api(key, 'POST', '/pets', { name: `P${index}`, categoryId: 1 })
    await slow.waitFor(30, 20_000)
    // The first 4 went at once; by the 9th, 5 had failed and the 3 still in flight ended: one at a time.
    expect(slow.received.slice(0, 4).map((got) => got.concurrent)).toContain(4)
    expect(slow.received.slice(9).every((got) => got.concurrent === 1)).toBe(true)
    expect(await metric(t, 'petstore_webhook_endpoints_circuit_open')).toBe(1)
    failing = false
    const seen = slow.received.length
    await slow.waitFor(seen + 20, 20_000)
    expect(Math.max(...slow.received.slice(seen).map((got) => got.concurrent))).toBe(4)
  }, 60_000)

  it.each([
    ['the 204 of a DELETE', 'DELETE', undefined, 204],
    ['the 200 of a disabling PATCH', 'PATCH', { status: 'disabled' }, 200],
  ] as const)(
    'starts no attempt after %s, though many were queued for the endpoint',
    async (_, method, body, status) => {
      t = await startWebhookApp()
      const slow = await receiver(() => ({ status: 200, delayMs: 300 }))
      const key = await t.issueKey()
      const endpoint = await subscribe(t, key, `http://hooks.test:${slow.port}/in`)
      for (let index = 0; index < 40; index++)
        await t.api(key, 'POST', '/pets', { name: `P${index}`, categoryId: 1 })
      await slow.waitFor(4)
      expect((await t.api(key, method, `/webhook_endpoints/${endpoint.id}`, body)).status).toBe(status)
      // At the answer at most 4 attempts were started and not ended: those being answered, and the rest of
      // the 4 still on their way. Anything beyond those started after the answer.
      const mayStillArrive = slow.received.length + MAX_IN_FLIGHT_PER_ENDPOINT - slow.inFlight
      // Until the dispatcher has nothing queued, in flight or due: from then on nothing can be sent.
      await t.server.dispatcher.whenIdle()
      expect(slow.received.length).toBeLessThanOrEqual(mayStillArrive)
      // And the answer did stop a queue: most of the 40 were never sent (how many went before it depends on
      // how fast this machine answered, 4 every 300 ms meanwhile).
      expect(slow.received.length).toBeLessThan(30)
    },
    30_000,
  )
})
