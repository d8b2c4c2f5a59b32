import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { type Pet, storedPets } from '../crash-scenario.js'
import { issueUnlimitedKey, killService, type Service, spawnInstances } from '../service-process.js'
import { expectEveryCommitDelivered } from '../webhooks/deliveries-check.js'
import { type Receiver, startReceiver } from '../webhooks/harness.js'
import { createTestDatabase, webhookInstancesEnv } from './test-stores.js'

/**
 * Events and webhooks on three instances sharing PostgreSQL and Redis (CONTRACT §14): one killed in the
 * middle of a burst of writes and another while delivering; every committed change still reaches the
 * endpoint, never two attempts of one delivery at once, never more than 4 requests in flight to it; and a
 * walk of the event list sees every event that committed before it started, however the writers interleave.
 */

let database: Awaited<ReturnType<typeof createTestDatabase>>
let dir: string
let instances: Service[] = []
const everyInstance: Service[] = []
let receiver: Receiver
let key: string
let env: Record<string, string>

beforeAll(async () => {
  database = await createTestDatabase()
  dir = mkdtempSync(join(tmpdir(), 'petstore-webhook-instances-'))
  env = webhookInstancesEnv(database.url)
  instances = await spawnInstances(3, env)
  everyInstance.push(...instances)
  receiver = await startReceiver(() => ({ status: 204, delayMs: 50 }))
  key = (await issueUnlimitedKey(env, dir)).key
})
afterAll(async () => {
  await Promise.all(everyInstance.map(killService))
  await receiver?.close()
  await database?.drop()
  rmSync(dir, { recursive: true, force: true })
})

const base = (i: number) => `http://127.0.0.1:${instances[i % instances.length]?.port}`

function call(i: number, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${base(i)}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
}

test('one instance killed mid-burst, another mid-delivery: every commit delivered, one attempt at a time', async () => {
  const url = `http://127.0.0.1:${receiver.port}/in`
  expect((await call(0, 'POST', '/webhook_endpoints', { url, events: ['pet.created'] })).status).toBe(201)
  let acknowledged = 0
  let failed = 0
  // 24 writers (8 per instance), each one create after another: the kill lands in the middle of the stream
  // (all at once, group commits answer a whole burst together, before any kill).
  const creates = Array.from({ length: 24 }, async (_, writer) => {
    for (let n = 0; n < 40; n++) {
      try {
        const response = await call(writer, 'POST', '/pets', { name: `burst ${writer}-${n}`, categoryId: 1 })
        if (response.status === 201) acknowledged++
        else failed++
      } catch {
        failed++
      }
    }
  })
  await expect.poll(() => acknowledged, { interval: 2, timeout: 10_000 }).toBeGreaterThan(60)
  await killService(instances[0] as Service)
  await Promise.all(creates)
  expect(failed).toBeGreaterThan(0)
  // Whichever instances hold the attempts in flight, both that are left are killed while they are.
  await expect.poll(() => receiver.inFlight, { interval: 5, timeout: 20_000 }).toBeGreaterThan(0)
  await Promise.all(instances.slice(1).map(killService))
  const [fresh] = await spawnInstances(1, env)
  everyInstance.push(fresh as Service)
  instances = [fresh as Service]
  const stored = (await storedPets(base(0), key)).map((pet: Pet) => pet.id)
  expect(stored.length).toBeGreaterThanOrEqual(acknowledged)
  const { deliveries, duplicates } = await expectEveryCommitDelivered(receiver, stored, 90_000)
  // The dispatchers' warnings: steps that failed, and requests hung up on for leases not renewed in time.
  const logs = everyInstance.map((service) => service.stdout()).join('')
  const warned = (pattern: RegExp) => logs.match(pattern)?.length ?? 0
  const warnings = `${warned(/webhook dispatch failed/g)} failed steps, ${warned(/requests in flight hung up on/g)} hang-ups`
  console.log(
    `three instances: ${stored.length} committed, ${deliveries} deliveries (${duplicates} duplicates), at most ${receiver.maxInFlight} in flight; ${warnings}`,
  )
  expect(duplicates).toBeGreaterThan(0)
  expect(receiver.overlaps).toBe(0)
  expect(receiver.maxInFlight, `${receiver.atMax.join('; ')}; ${warnings}`).toBeLessThanOrEqual(4)
}, 180_000)

/**
 * Every pet.created event id a walk along `Link: rel="next"` meets, from instance `i`, in `pages` pages
 * at most (writers may add events faster than a walk of 20 a page reaches the end).
 */
async function walkEvents(i: number, pages = Number.POSITIVE_INFINITY, names?: string[]): Promise<string[]> {
  const ids: string[] = []
  let path: string | undefined = '/events?type=pet.created&limit=20'
  for (let page = 0; path && page < pages; page++) {
    const response = await call(i, 'GET', path)
    for (const event of (await response.json()) as { id: string; data: { object: { name: string } } }[]) {
      ids.push(event.id)
      names?.push(event.data.object.name)
    }
    path = /<[^>]*\/v1(\/events[^>]*)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1]
  }
  return ids
}

test('event ids follow commit order: a walk never passes an event that commits after it', async () => {
  // Three instances again; eight writers spread over them race while walks run.
  const more = await spawnInstances(2, env)
  everyInstance.push(...more)
  instances.push(...more)
  let writing = true
  const writers = Array.from({ length: 8 }, async (_, w) => {
    for (let i = 0; writing; i++) await call(w, 'POST', '/pets', { name: `walk ${w}-${i}`, categoryId: 2 })
  })
  // Three walks at a time, one per instance: each page publishes first, so publishers race too.
  const walks: string[][] = []
  for (let round = 0; round < 4; round++) {
    walks.push(...(await Promise.all([0, 1, 2].map((i) => walkEvents(i, 25)))))
  }
  writing = false
  await Promise.all(writers)
  // Had an id been drawn before one that committed earlier, a walk would have passed it: a gap below
  // the highest id the walk saw, filled once everything committed.
  const names: string[] = []
  const all = await walkEvents(0, Number.POSITIVE_INFINITY, names)
  // Each committed change has exactly one event, however many publishers raced to number it.
  expect(new Set(names).size).toBe(names.length)
  for (const seen of walks) {
    const highest = seen.at(-1) ?? ''
    const passed = new Set(seen)
    expect(all.filter((id) => id <= highest && !passed.has(id))).toEqual([])
    expect([...seen].sort()).toEqual(seen)
  }
}, 90_000)
