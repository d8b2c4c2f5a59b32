import { afterEach, describe, expect, test } from 'vitest'
import { limitsFor } from '../../src/api-keys/api-keys.plans.js'
import type { BanPolicy, Decision, Limits, RateLimitStore } from '../../src/rate-limit/rate-limit.port.js'
import { DAY_MS, MINUTE_MS } from '../../src/rate-limit/windows.js'

export type StoreFactory = (policy: BanPolicy) => Promise<RateLimitStore> | RateLimitStore

/** 2027-03-10 00:00:00 UTC, the start of a day and of a minute. */
const DAY_START = Date.UTC(2027, 2, 10)
const POLICY: BanPolicy = { banAfter: 10, banMs: 900_000 }

/**
 * The semantics every rate-limit store must have, run against each adapter. Time is passed in, never
 * waited for.
 */
export function describeRateLimitStoreContract(name: string, createStore: StoreFactory): void {
  describe(`rate-limit store contract: ${name}`, () => {
    const opened: RateLimitStore[] = []
    let counter = 0
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()))
    })
    async function open(policy = POLICY) {
      const store = await createStore(policy)
      opened.push(store)
      // A fresh subject per test, so stores that outlive a test (a shared server) start clean.
      const subject = `contract-${Date.now()}-${counter++}`
      const consume = (limits: Limits, now: number, who = subject) =>
        Promise.resolve(store.consume(who, limits, now))
      return { store, subject, consume }
    }
    async function admitted(
      consume: (limits: Limits, now: number) => Promise<Decision>,
      limits: Limits,
      now: number,
      tries: number,
    ) {
      let count = 0
      for (let i = 0; i < tries; i++) if ((await consume(limits, now)).outcome === 'allowed') count++
      return count
    }

    test.each(['free', 'pro', 'business'] as const)(
      'admits exactly the per-minute limit of the %s plan',
      async (plan) => {
        const { consume } = await open({ banAfter: 1_000_000, banMs: 1 })
        const limits = limitsFor(plan)
        expect(await admitted(consume, limits, DAY_START + 5_000, limits.perMinute + 5)).toBe(
          limits.perMinute,
        )
      },
    )

    test.each(['free', 'pro', 'business'] as const)(
      'admits exactly the per-day limit of the %s plan',
      async (plan) => {
        const { consume } = await open({ banAfter: 1_000_000, banMs: 1 })
        const limits = limitsFor(plan)
        let admittedToday = 0
        // Minute after minute, each minute's full allowance, until the day refuses.
        for (let minute = 0; minute * limits.perMinute <= limits.perDay; minute++) {
          admittedToday += await admitted(consume, limits, DAY_START + minute * MINUTE_MS, limits.perMinute)
        }
        expect(admittedToday).toBe(limits.perDay)
        expect((await consume(limits, DAY_START + DAY_MS)).outcome).toBe('allowed')
      },
    )

    test('admits exactly an enterprise key its custom numbers', async () => {
      const { consume } = await open()
      expect(await admitted(consume, { perMinute: 7, perDay: 1_000 }, DAY_START, 9)).toBe(7)
    })

    test('the minute window rolls over at the minute boundary, the day window keeps counting', async () => {
      const { consume } = await open()
      const limits = limitsFor('free')
      expect(await admitted(consume, limits, DAY_START + MINUTE_MS - 1, 61)).toBe(60)
      const next = await consume(limits, DAY_START + MINUTE_MS)
      expect(next.outcome).toBe('allowed')
      expect(next.windows.find((window) => window.name === 'day')?.remaining).toBe(1_000 - 61)
    })

    test('the day window binds before the minute window (1000/min, 5/day)', async () => {
      const { consume } = await open()
      const limits = { perMinute: 1_000, perDay: 5 }
      const now = DAY_START + 3 * 3_600_000
      expect(await admitted(consume, limits, now, 5)).toBe(5)
      const refused = await consume(limits, now)
      expect(refused.outcome).toBe('limited')
      if (refused.outcome !== 'limited') return
      expect(refused.refusedBy).toMatchObject({
        name: 'day',
        limit: 5,
        remaining: 0,
        resetAt: DAY_START + DAY_MS,
      })
      expect(refused.retryAfterMs).toBe(DAY_START + DAY_MS - now)
    })

    test('a refused request consumes nothing in either window', async () => {
      const { consume } = await open()
      const limits = { perMinute: 3, perDay: 5 }
      expect(await admitted(consume, limits, DAY_START, 6)).toBe(3)
      expect(await admitted(consume, limits, DAY_START + MINUTE_MS, 1)).toBe(1)
      // The day window now refuses; the minute window must not have counted the refusals.
      expect((await consume(limits, DAY_START + MINUTE_MS)).outcome).toBe('allowed')
      const dayRefusal = await consume(limits, DAY_START + MINUTE_MS)
      expect(dayRefusal.outcome).toBe('limited')
      const minute = dayRefusal.windows.find((window) => window.name === 'minute')
      expect(minute?.remaining).toBe(1)
    })

    test('reports the retry delay to the end of the exhausted window', async () => {
      const { consume } = await open()
      const limits = { perMinute: 1, perDay: 100 }
      await consume(limits, DAY_START + 45_000)
      const refused = await consume(limits, DAY_START + 45_000)
      expect(refused).toMatchObject({ outcome: 'limited', retryAfterMs: 15_000 })
    })

    test('bans after banAfter refusals inside one window, and the ban ends by itself', async () => {
      const { consume } = await open({ banAfter: 10, banMs: 900_000 })
      const limits = limitsFor('free')
      const now = DAY_START + 10_000
      expect(await admitted(consume, limits, now, 60)).toBe(60)
      for (let refusal = 1; refusal <= 10; refusal++)
        expect((await consume(limits, now)).outcome).toBe('limited')
      const banned = await consume(limits, now)
      expect(banned).toMatchObject({ outcome: 'banned', bannedUntil: now + 900_000, retryAfterMs: 900_000 })
      const later = await consume(limits, now + 600_000)
      expect(later).toMatchObject({ outcome: 'banned', retryAfterMs: 300_000 })
      expect((await consume(limits, now + 900_000)).outcome).toBe('allowed')
    })

    test('peek tells the next decision without counting', async () => {
      const { store, subject, consume } = await open()
      const limits = { perMinute: 2, perDay: 10 }
      for (let i = 0; i < 5; i++)
        expect((await store.peek(subject, limits, DAY_START)).outcome).toBe('allowed')
      expect(await admitted(consume, limits, DAY_START, 3)).toBe(2)
      expect((await store.peek(subject, limits, DAY_START)).outcome).toBe('limited')
    })

    test('reset forgets a subject, and subjects never share counts', async () => {
      const { store, subject, consume } = await open()
      const limits = { perMinute: 1, perDay: 10 }
      await consume(limits, DAY_START)
      expect((await consume(limits, DAY_START, `${subject}-other`)).outcome).toBe('allowed')
      expect((await consume(limits, DAY_START)).outcome).toBe('limited')
      await store.reset(subject)
      expect((await consume(limits, DAY_START)).outcome).toBe('allowed')
      expect(typeof store.shared).toBe('boolean')
    })
  })
}
