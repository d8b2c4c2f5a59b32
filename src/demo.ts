import { mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { addUsage, STATUS_CLASSES, utcDay } from './api-keys/usage.js'
import { type DemoReceiver, startDemoReceiver } from './demo-receiver.js'
import type { Deps } from './deps.js'
import type { PetStatus } from './pets/pets.schemas.js'
import type { RunningServer } from './server.js'
import { serveFromEnvironment } from './start.js'

const NAMES = ['Rex', 'Tom', 'Bella', 'Milo', 'Luna', 'Coco', 'Nala', 'Oscar', 'Kiwi']
/** Every status a pet can have, none included (a pet without a status leaves the field out). */
const STATUSES: (PetStatus | undefined)[] = ['available', 'pending', 'sold', undefined]
export const DEMO_PETS = 36
/** Past days of requests the demo key seems to have made, so that the dashboard's chart shows something. */
export const USAGE_DAYS = 14
const DAY_MS = 86_400_000

/**
 * `petstore serve --demo` (`npm run demo`, CONTRACT §1): a normal start, but on a fresh SQLite file in a
 * temporary folder (removed when the service stops), in staging, with 36 pets of every status, one open
 * order, a `pro` test key with two weeks of usage, and a webhook endpoint whose receiver the demo runs
 * (so private addresses are allowed), and lines on stderr to start from: the docs, the dashboard, the key,
 * a curl command.
 */
export async function serveDemo(
  env: NodeJS.ProcessEnv,
  writeError: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<number> {
  const folder = mkdtempSync(join(tmpdir(), 'petstore-demo-'))
  const demoEnv = {
    ...env,
    DATABASE_URL: `sqlite:${join(folder, 'demo.sqlite')}`,
    PETSTORE_ENV: 'staging',
    PETSTORE_WEBHOOKS_ALLOW_PRIVATE: '1',
  }
  const receiver = await startDemoReceiver()
  try {
    return await serveFromEnvironment(demoEnv, writeError, async (server) => {
      const key = await seedDemo(server.deps, receiver)
      for (const line of introduction(server, key)) writeError(line)
    })
  } finally {
    await receiver.close()
    rmSync(folder, { recursive: true, force: true })
  }
}

/** The demo's key, its usage and its endpoint; then pets, one of them ordered with the key (events). */
async function seedDemo(deps: Deps, receiver: DemoReceiver): Promise<string> {
  const { apiKey, key } = await deps.apiKeys.issueApiKey({ plan: 'pro', name: 'demo' })
  await seedUsage(deps, apiKey.id)
  const endpoint = await deps.webhookEndpoints.create(apiKey.id, {
    url: receiver.url,
    events: ['*'],
    description: "the demo's own receiver (it verifies every signature)",
  })
  receiver.useSecret(endpoint.secret)
  const created = await Promise.all(
    Array.from({ length: DEMO_PETS }, (_, index) => {
      const status = STATUSES[index % STATUSES.length]
      const name = `${NAMES[index % NAMES.length]} ${Math.floor(index / NAMES.length) + 1}`
      const newPet = { name, categoryId: (index % 4) + 1, ...(status && { status }) }
      return deps.pets.createPet({ apiKeyId: apiKey.id, newPet })
    }),
  )
  const ordered = created.find(({ pet }) => pet.status === 'available')
  if (ordered) await deps.orders.placeOrder({ apiKeyId: apiKey.id, petId: ordered.pet.id })
  return key
}

/** Requests per day for the past USAGE_DAYS days, varied so that each status class shows. */
function seedUsage(deps: Deps, apiKeyId: number): Promise<void> {
  const now = deps.clock.now()
  const share = { '2xx': 0.9, '4xx': 0.06, '429': 0.03, '5xx': 0.01 } as const
  const tallies = Array.from({ length: USAGE_DAYS }, (_, index) => {
    const day = utcDay(now - (USAGE_DAYS - index) * DAY_MS)
    const requests = 400 + ((index * 137) % 600)
    return STATUS_CLASSES.map((statusClass) => ({
      apiKeyId,
      day,
      statusClass,
      requests: Math.round(requests * share[statusClass]),
    }))
  }).flat()
  return deps.database.write((trx) => addUsage(deps.database, trx, tallies))
}

function introduction(server: RunningServer, key: string): string[] {
  const { port } = server.app.server.address() as AddressInfo
  const configured = server.deps.config.host
  // Listening on every interface: the loopback address is one of them.
  const host = configured === '0.0.0.0' || configured === '::' ? '127.0.0.1' : configured
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${port}/v1`
  return [
    '',
    `petstore demo: ${DEMO_PETS} pets of every status, one open order and a webhook endpoint, on a temporary database`,
    `  docs (Try it out: Authorize with the key): ${base}/docs`,
    `  dashboard (sign in with the key): ${base.slice(0, -'/v1'.length)}/dashboard`,
    `  test key (pro plan, staging): ${key}`,
    `  try: curl -H "Authorization: Bearer ${key}" "${base}/pets?limit=5"`,
    '',
  ]
}
