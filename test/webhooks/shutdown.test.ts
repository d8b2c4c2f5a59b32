import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { createTestStores, type TestStores } from '../helpers.js'
import {
  issueUnlimitedKey,
  killService,
  type Service,
  spawnService,
  waitUntilHealthy,
} from '../service-process.js'
import { type Answer, type Receiver, startReceiver } from './harness.js'

/**
 * SIGTERM (CONTRACT §14): no new attempts start; an attempt in flight finishes within the drain budget
 * and is written down, or is given back at its end, so the next instance makes it at once rather than
 * when its lease would have run out.
 */

let dir: string
let stores: TestStores
let receiver: Receiver
let key: string
const started: Service[] = []

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-webhook-drain-'))
  stores = await createTestStores(dir)
})
afterEach(async () => {
  await Promise.all(started.splice(0).map(killService))
  await receiver?.close()
  await stores.drop()
  rmSync(dir, { recursive: true, force: true })
})

async function start(env: Record<string, string> = {}): Promise<Service> {
  const service = await spawnService({
    ...stores.env,
    LOG_LEVEL: 'warn',
    PETSTORE_WEBHOOKS_ALLOW_PRIVATE: '1',
    PETSTORE_DRAIN_SECONDS: '1',
    ...env,
  })
  started.push(service)
  await waitUntilHealthy(service)
  return service
}

/** A service with an endpoint on `receiver`, one pet created and its delivery in flight. */
async function deliveryInFlight(answer: () => Answer, env: Record<string, string> = {}): Promise<Service> {
  receiver = await startReceiver(answer)
  const service = await start(env)
  key = (await issueUnlimitedKey(stores.env, dir)).key
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const url = `http://127.0.0.1:${service.port}/v1`
  const body = { url: `http://127.0.0.1:${receiver.port}/`, events: ['pet.created'] }
  await fetch(`${url}/webhook_endpoints`, { method: 'POST', headers, body: JSON.stringify(body) })
  await fetch(`${url}/pets`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
  })
  await expect.poll(() => receiver.inFlight, { timeout: 10_000 }).toBe(1)
  return service
}

async function attempts(service: Service) {
  const headers = { authorization: `Bearer ${key}` }
  const base = `http://127.0.0.1:${service.port}/v1`
  const [endpoint] = (await (await fetch(`${base}/webhook_endpoints`, { headers })).json()) as {
    id: string
  }[]
  return (await fetch(`${base}/webhook_endpoints/${endpoint?.id}/deliveries`, { headers })).json()
}

test('an attempt that ends within the drain is written down as it ended', async () => {
  const service = await deliveryInFlight(() => ({ status: 200, delayMs: 300 }))
  service.child.kill('SIGTERM')
  expect(await service.exited).toBe(0)
  const next = await start()
  // One attempt, written down as succeeded, and none pending: the new process has nothing it could send.
  expect(await attempts(next)).toMatchObject([{ attempt: 1, status: 'succeeded', httpStatus: 200 }])
  expect(receiver.received).toHaveLength(1)
})

test('an attempt still running at the end of the drain is given back and made again at once', async () => {
  const service = await deliveryInFlight(() => ({ status: 200, delayMs: 3000 }))
  service.child.kill('SIGTERM')
  const stopping = Date.now()
  expect(await service.exited).toBe(0)
  expect(Date.now() - stopping).toBeLessThan(2500)
  await start()
  // Measured from when the new process answers (starting one takes seconds on a loaded machine). A lease
  // would have held the attempt for PETSTORE_WEBHOOK_TIMEOUT_MS + 10 s: released, it goes out at once.
  const restarted = Date.now()
  await receiver.waitFor(2, 5_000)
  expect((receiver.received[1]?.at ?? 0) - restarted).toBeLessThan(5_000)
  expect(receiver.received[1]?.body).toBe(receiver.received[0]?.body)
})

test('while it drains, the instance still holds its endpoints: another one never sends beside its requests', async () => {
  // Longer than a lease (5 s): an instance that stopped renewing at SIGTERM lost the endpoint mid-drain, and
  // the other took the attempt still in flight and sent it again beside it.
  const draining = await deliveryInFlight(() => ({ status: 200, delayMs: 8_000 }), {
    PETSTORE_DRAIN_SECONDS: '12',
  })
  const other = await start()
  draining.child.kill('SIGTERM')
  expect(await draining.exited).toBe(0)
  // The other instance had 8 s to take the endpoint over; a second more for anything it would send.
  await new Promise((resolve) => setTimeout(resolve, 1_000))
  expect(receiver.overlaps).toBe(0)
  expect(receiver.received).toHaveLength(1)
  expect(await attempts(other)).toMatchObject([{ attempt: 1, status: 'succeeded', httpStatus: 200 }])
})
