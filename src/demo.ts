import { mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Deps } from './deps.js'
import type { PetStatus } from './pets/pets.schemas.js'
import type { RunningServer } from './server.js'
import { serveFromEnvironment } from './start.js'

const NAMES = ['Rex', 'Tom', 'Bella', 'Milo', 'Luna', 'Coco', 'Nala', 'Oscar', 'Kiwi']
/** Every status a pet can have, none included (a pet without a status leaves the field out). */
const STATUSES: (PetStatus | undefined)[] = ['available', 'pending', 'sold', undefined]
const DEMO_PETS = 36

/**
 * `petstore serve --demo` (`npm run demo`, CONTRACT §1): a normal start, but on a fresh SQLite file in a
 * temporary folder (removed when the service stops), in staging, with 36 pets of every status, one open
 * order and a `pro` test key, and three lines on stderr to start from: the docs, the key, a curl command.
 */
export async function serveDemo(
  env: NodeJS.ProcessEnv,
  writeError: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<number> {
  const folder = mkdtempSync(join(tmpdir(), 'petstore-demo-'))
  const demoEnv = { ...env, DATABASE_URL: `sqlite:${join(folder, 'demo.sqlite')}`, PETSTORE_ENV: 'staging' }
  try {
    return await serveFromEnvironment(demoEnv, writeError, async (server) => {
      const key = await seedDemo(server.deps)
      for (const line of introduction(server, key)) writeError(line)
    })
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
}

/** The demo's pets, one of them ordered with the new key; the key. */
async function seedDemo(deps: Deps): Promise<string> {
  const { apiKey, key } = await deps.apiKeys.issueApiKey({ plan: 'pro', name: 'demo' })
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

function introduction(server: RunningServer, key: string): string[] {
  const { port } = server.app.server.address() as AddressInfo
  const configured = server.deps.config.host
  // Listening on every interface: the loopback address is one of them.
  const host = configured === '0.0.0.0' || configured === '::' ? '127.0.0.1' : configured
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${port}/v1`
  return [
    '',
    `petstore demo: ${DEMO_PETS} pets of every status and one open order, on a temporary database`,
    `  docs (Try it out: Authorize with the key): ${base}/docs`,
    `  test key (pro plan, staging): ${key}`,
    `  try: curl -H "Authorization: Bearer ${key}" "${base}/pets?limit=5"`,
    '',
  ]
}
