import { describe, expect, test } from 'vitest'
import { createMemoryStore } from '../../src/rate-limit/memory-store.js'
import { DAY_MS } from '../../src/rate-limit/windows.js'
import { describeRateLimitStoreContract } from './rate-limit-store.contract.js'

describeRateLimitStoreContract('in-process memory store', (policy) => createMemoryStore(policy))

describe('memory store bounds', () => {
  const limits = { perMinute: 60, perDay: 1_000 }
  const now = Date.UTC(2027, 2, 10, 12)

  test('is not shared across instances', () => {
    expect(createMemoryStore({ banAfter: 10, banMs: 1 }).shared).toBe(false)
  })

  test('never holds more than maxSubjects, however many distinct callers arrive', () => {
    const store = createMemoryStore({ banAfter: 10, banMs: 1, maxSubjects: 1_000 })
    for (let i = 0; i < 200_000; i++) store.consume(`ip:${i}`, limits, now)
    expect(store.size).toBe(1_000)
  })

  test('a caller that keeps sending keeps its counts while a flood of new callers is evicted', () => {
    const store = createMemoryStore({ banAfter: 1_000, banMs: 1, maxSubjects: 100 })
    const tight = { perMinute: 5, perDay: 1_000 }
    for (let i = 0; i < 5; i++) store.consume('key:busy', tight, now)
    for (let i = 0; i < 10_000; i++) {
      store.consume(`ip:${i}`, limits, now)
      if (i % 50 === 0) expect(store.consume('key:busy', tight, now).outcome).toBe('limited')
    }
  })

  test('a flood of new callers cannot wipe a ban, a refused window or a kept subject', () => {
    const store = createMemoryStore({
      banAfter: 1,
      banMs: 900_000,
      maxSubjects: 50,
      keep: (s) => s.startsWith('key:'),
    })
    const day = { perMinute: 1_000, perDay: 5 }
    for (let i = 0; i < 6; i++) store.consume('ip:waiting', day, now)
    for (let i = 0; i < 7; i++) store.consume('ip:banned', day, now)
    for (let i = 0; i < 5; i++) store.consume('key:quiet', day, now)
    expect(store.consume('ip:banned', day, now).outcome).toBe('banned')
    for (let i = 0; i < 10_000; i++) store.consume(`ip:flood-${i}`, limits, now + 1)
    expect(store.size).toBe(50)
    expect(store.consume('ip:waiting', day, now + 61_000).outcome).not.toBe('allowed')
    expect(store.consume('ip:banned', day, now + 61_000).outcome).toBe('banned')
    expect(store.consume('key:quiet', day, now + 61_000).outcome).toBe('limited')
  })

  test('entries of past days are dropped as new requests arrive, without any timer', () => {
    const store = createMemoryStore({ banAfter: 10, banMs: 1 })
    for (let i = 0; i < 1_000; i++) store.consume(`ip:old-${i}`, limits, now)
    for (let i = 0; i < 600; i++) store.consume(`ip:new-${i}`, limits, now + DAY_MS)
    expect(store.size).toBe(600)
  })
})
