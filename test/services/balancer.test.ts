import { type ChildProcess, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { storedPets } from '../crash-scenario.js'
import { freePort, issueUnlimitedKey, killService, type Service, spawnInstances } from '../service-process.js'
import { createTestDatabase, isolatedRedisUrl } from './test-stores.js'

/**
 * The balancer recipe (deploy/haproxy.cfg, as committed, with Debian's HAProxy) in front of two instances
 * on PostgreSQL + Redis: one instance is SIGKILLed under GET and POST load and stays down, and the clients
 * see no error at all: requests it refused or died holding are sent again to the other (POSTs carry an
 * Idempotency-Key, so a repeat is answered with the first 201 or performed once).
 */

const WORKERS = 20
const LOAD_MS = 12_000
const KILL_AT_MS = 3_000

let database: Awaited<ReturnType<typeof createTestDatabase>>
let dir: string
let instances: Service[] = []
let balancer: ChildProcess | undefined
let balancerPort: number
let key: string

/** The committed recipe, pointed at local instances: only the addresses and the name resolution differ. */
function localRecipe(listen: number, servers: number[]): string {
  const recipe = readFileSync('deploy/haproxy.cfg', 'utf8')
  const local = recipe
    .replace(/^resolvers docker\n(?: {2}.*\n)+/m, '')
    .replace(/ resolvers docker init-addr \S+/, '')
    .replace(/^ {2}bind :8080$/m, `  bind 127.0.0.1:${listen}`)
    .replace(/^ {2}server (api\d) \1:8080$/gm, (_line, name: string) => {
      const port = servers[Number(name.slice(3)) - 1]
      return `  server ${name} 127.0.0.1:${port}`
    })
  expect(local).not.toMatch(/docker|api\d:8080/)
  return local
}

beforeAll(async () => {
  database = await createTestDatabase()
  dir = mkdtempSync(join(tmpdir(), 'petstore-balancer-'))
  const env = { DATABASE_URL: database.url, REDIS_URL: isolatedRedisUrl(), LOG_LEVEL: 'info' }
  instances = await spawnInstances(2, env)
  key = (await issueUnlimitedKey(env, dir)).key
  balancerPort = await freePort()
  const config = join(dir, 'haproxy.cfg')
  writeFileSync(
    config,
    localRecipe(
      balancerPort,
      instances.map((service) => service.port),
    ),
  )
  balancer = spawn(process.env.TEST_HAPROXY ?? 'haproxy', ['-db', '-f', config], { stdio: 'ignore' })
  for (let tries = 0; ; tries++) {
    const status = await send('GET', '/readyz').catch(() => 0)
    if (status === 200) break
    if (tries > 100) throw new Error('the balancer did not answer')
    await delay(100)
  }
}, 60_000)

afterAll(async () => {
  balancer?.kill('SIGKILL')
  await Promise.all(instances.map(killService))
  await database?.drop()
  rmSync(dir, { recursive: true, force: true })
})

const agent = new Agent({ keepAlive: true, maxSockets: WORKERS })

/** One request through the balancer; resolves with its status (rejects on a connection error). */
function send(method: string, path: string, body?: object, headers: Record<string, string> = {}) {
  return new Promise<number>((resolve, reject) => {
    const payload = body && JSON.stringify(body)
    const sent = request(
      {
        port: balancerPort,
        host: '127.0.0.1',
        method,
        path,
        agent,
        headers: {
          authorization: `Bearer ${key}`,
          ...(payload && {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(payload),
          }),
          ...headers,
        },
      },
      (response) => {
        response.resume()
        response.on('end', () => resolve(response.statusCode ?? 0))
      },
    )
    sent.on('error', reject)
    sent.end(payload)
  })
}

test('a SIGKILLed instance that stays down costs GET and POST clients nothing', async () => {
  const outcomes = new Map<string, number>()
  const created: string[] = []
  const count = (outcome: string) => outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
  const end = Date.now() + LOAD_MS
  const worker = async (index: number) => {
    while (Date.now() < end) {
      try {
        if (index % 2 === 0) {
          count(String(await send('GET', '/v1/pets?limit=5')))
        } else {
          const name = `lb ${randomUUID()}`
          const status = await send('POST', '/v1/pets', { name, categoryId: 1 }, { 'idempotency-key': name })
          count(String(status))
          if (status === 201) created.push(name)
        }
      } catch (error) {
        count(`connection error: ${(error as Error).message}`)
      }
    }
  }
  const load = Promise.all(Array.from({ length: WORKERS }, (_, i) => worker(i)))
  await delay(KILL_AT_MS)
  const victim = instances[1] as Service
  // It served its share before it died (its access log is written at least once a second).
  expect(victim.stdout()).toContain('"msg":"request completed"')
  await killService(victim)
  const killedAt = Date.now()
  await load
  expect(end - killedAt).toBeGreaterThanOrEqual(6_000)
  console.info(`through the balancer: ${JSON.stringify(Object.fromEntries(outcomes))}`)
  expect([...outcomes.keys()].sort()).toEqual(['200', '201'])
  // Nothing acknowledged is lost, and no retried POST made a second pet.
  const stored = await storedPets(`http://127.0.0.1:${instances[0]?.port}`, key, 'lb')
  const names = stored.map((pet) => pet.name)
  expect(new Set(names).size).toBe(names.length)
  for (const name of created) expect(names).toContain(name)
}, 60_000)
