import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { limitsFor } from '../../src/api-keys/api-keys.plans.js'
import { createRedisStore } from '../../src/rate-limit/redis-store.js'
import { describeRateLimitStoreContract } from '../contract/rate-limit-store.contract.js'

const url = process.env.TEST_REDIS_URL
if (!url) throw new Error('TEST_REDIS_URL is not set: run these suites with `npm run test:services`')

describeRateLimitStoreContract('Redis store', (policy) => createRedisStore(url, policy, 2000))

describe('Redis store across instances', () => {
  const policy = { banAfter: 1_000, banMs: 60_000 }
  const now = Date.UTC(2027, 2, 10, 10, 0, 30)
  let instances: Awaited<ReturnType<typeof createRedisStore>>[] = []
  beforeAll(async () => {
    instances = await Promise.all(Array.from({ length: 3 }, () => createRedisStore(url, policy, 2000)))
  })
  afterAll(() => Promise.all(instances.map((store) => store.close())))

  test('is shared', () => {
    expect(instances.every((store) => store.shared)).toBe(true)
  })

  test('three instances hammering one Free key concurrently admit exactly 60 in the minute', async () => {
    const subject = `key:concurrent-${Date.now()}`
    const decisions = await Promise.all(
      Array.from({ length: 300 }, (_, i) => instances[i % 3]?.consume(subject, limitsFor('free'), now)),
    )
    expect(decisions.filter((decision) => decision?.outcome === 'allowed')).toHaveLength(60)
    expect(decisions.filter((decision) => decision?.outcome === 'limited')).toHaveLength(240)
  })

  test('keeps one hash-tagged key per subject that expires when its day ends', async () => {
    const [store] = instances
    const subject = `ip:ttl-${Date.now()}`
    await store?.consume(subject, limitsFor('free'), Date.now())
    const key = `petstore:rl:{${subject}}`
    const ttl = (await store?.redis.pttl(key)) ?? -1
    const dayEnd = Date.UTC(
      new Date().getUTCFullYear(),
      new Date().getUTCMonth(),
      new Date().getUTCDate() + 1,
    )
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(dayEnd - Date.now() + 1_000)
  })
})
