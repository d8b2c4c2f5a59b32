import type { Plan } from '../src/api-keys/api-keys.plans.js'
import { createApiKeyService } from '../src/api-keys/api-keys.service.js'
import { systemClock } from '../src/clock.js'
import { connectDatabase } from '../src/db/connect.js'
import { seedDatabase } from './lib.js'

export interface SoakKey {
  plan: Plan
  key: string
}

/**
 * 1,000 pets and keys of every plan: under the soak's load the Free and Pro keys go over their limits
 * (so 429s and bans are part of the traffic); Business stays mostly under; Enterprise never reaches its.
 */
const PLANS: Plan[] = ['free', 'free', 'free', 'pro', 'pro', 'business', 'business']

export async function issueSoakKeys(databasePath: string): Promise<SoakKey[]> {
  const unlimited = await seedDatabase(databasePath, 1000)
  const handle = await connectDatabase({ kind: 'sqlite', path: databasePath, timeoutMs: 2000 })
  const service = createApiKeyService({ handle, clock: systemClock, env: 'production' })
  const keys: SoakKey[] = [{ plan: 'enterprise', key: unlimited }]
  for (const plan of PLANS) keys.push({ plan, key: (await service.issueApiKey({ plan })).key })
  await handle.close()
  return keys
}
