import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { issueUnlimitedKey, killService, type Service, spawnInstances } from '../service-process.js'
import { type Receiver, startReceiver } from '../webhooks/harness.js'
import { createTestDatabase, webhookInstancesEnv } from './test-stores.js'

/**
 * An instance that freezes (SIGSTOP: its kernel still answers TCP keepalives, so only a deadline ends
 * what it holds) stalls no other instance's writes or deliveries for more than 10 s (CONTRACT §14): its
 * open transaction is ended by the server after the database deadline, and its endpoint leases lapse.
 */

const FREEZE_MS = 60_000
let database: Awaited<ReturnType<typeof createTestDatabase>>
let dir: string
let instances: Service[] = []
let receiver: Receiver
let key: string

beforeAll(async () => {
  database = await createTestDatabase()
  dir = mkdtempSync(join(tmpdir(), 'petstore-webhook-freeze-'))
  const env = webhookInstancesEnv(database.url)
  instances = await spawnInstances(3, env)
  receiver = await startReceiver()
  key = (await issueUnlimitedKey(env, dir)).key
})
afterAll(async () => {
  for (const instance of instances) instance.child.kill('SIGCONT')
  await Promise.all(instances.map(killService))
  await receiver?.close()
  await database?.drop()
  rmSync(dir, { recursive: true, force: true })
})

/** One create on instance `i`: when it was asked, and its status (0: no answer). */
async function createOn(i: number, name: string): Promise<{ at: number; status: number; id?: number }> {
  const at = Date.now()
  try {
    const response = await fetch(`http://127.0.0.1:${instances[i]?.port}/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, categoryId: 1 }),
      signal: AbortSignal.timeout(5_000),
    })
    const body = (await response.json()) as { id?: number }
    return { at, status: response.status, ...(body.id !== undefined && { id: body.id }) }
  } catch {
    return { at, status: 0 }
  }
}

test('an instance frozen mid-write for 60 s holds up the others’ writes and deliveries for less than 10 s', async () => {
  const url = `http://127.0.0.1:${receiver.port}/in`
  const subscribed = await fetch(`http://127.0.0.1:${instances[0]?.port}/v1/webhook_endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url, events: ['pet.created'] }),
  })
  expect(subscribed.status).toBe(201)
  // Every instance writes: the one to be frozen as fast as it answers (so it is most likely inside a
  // transaction, holding its locks), the other two paced, so that 60 s of it leave the machine to the
  // suite's other file (test:services runs two at once)...
  let writing = true
  const results: { instance: number; at: number; status: number; id?: number }[] = []
  const writers = [0, 1, 2].map(async (instance) => {
    for (let n = 0; writing; n++) {
      results.push({ instance, ...(await createOn(instance, `w${instance}-${n}`)) })
      await delay(instance === 0 ? 5 : 25)
    }
  })
  // ...and instance 0 delivers: it has just sent, so it holds the endpoint's lease when it freezes.
  await receiver.waitFor(20, 10_000)
  const frozen = instances[0] as Service
  frozen.child.kill('SIGSTOP')
  const frozenAt = Date.now()
  await delay(FREEZE_MS)
  const thawAt = Date.now()
  const deliveredWhileFrozen = receiver.received.filter((got) => got.at < thawAt).map((got) => got.body)
  frozen.child.kill('SIGCONT')
  writing = false
  await Promise.all(writers)

  // The others' writes: answered 201 again within 10 s of the freeze, and from then on until the thaw.
  const others = results.filter((r) => r.instance !== 0 && r.at >= frozenAt && r.at < thawAt)
  const late = others.filter((r) => r.at >= frozenAt + 10_000)
  expect(late.length).toBeGreaterThan(10)
  expect(late.every((r) => r.status === 201)).toBe(true)
  // The others' deliveries: a pet they created 10 s into the freeze reached the receiver before the thaw.
  const lateIds = new Set(late.map((r) => r.id))
  const delivered = deliveredWhileFrozen.map(
    (body) => (JSON.parse(body) as { data: { object: { id: number } } }).data.object.id,
  )
  expect(delivered.some((id) => lateIds.has(id))).toBe(true)
}, 150_000)
