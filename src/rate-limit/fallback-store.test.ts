import { afterEach, expect, test, vi } from 'vitest'
import { withFallback } from './fallback-store.js'
import { createMemoryStore } from './memory-store.js'
import type { RateLimitStore } from './rate-limit.port.js'

/**
 * The circuit breaker in front of the shared store, against an in-process stand-in for Redis whose
 * answers the test turns on and off (the real Redis, paused with SIGSTOP, is in test/services).
 */
const limits = { perMinute: 60, perDay: 1000 }
const policy = { banAfter: 10, banMs: 1000 }

function flakyPrimary() {
  const store = createMemoryStore(policy)
  const state = { answering: true, calls: 0, pings: 0 }
  const fail = () => Promise.reject(new Error('Command timed out'))
  const primary: RateLimitStore & { ping(): Promise<unknown> } = {
    shared: true,
    consume: (...args) => {
      state.calls++
      return state.answering ? store.consume(...args) : fail()
    },
    peek: (...args) => (state.answering ? store.peek(...args) : fail()),
    ping: () => {
      state.pings++
      return state.answering ? Promise.resolve('PONG') : fail()
    },
    reset: (subject) => store.reset(subject),
    close: () => store.close(),
  }
  return { primary, state }
}

afterEach(() => {
  vi.useRealTimers()
})

test('after 3 misses in a row requests stop asking the primary until a probe gets an answer', async () => {
  vi.useFakeTimers()
  const { primary, state } = flakyPrimary()
  const events = { fallbacks: 0, episodes: 0, recoveries: 0 }
  const store = withFallback(primary, createMemoryStore(policy), {
    onFallback: (_error, first) => {
      events.fallbacks++
      if (first) events.episodes++
    },
    onRecovery: () => events.recoveries++,
  })
  expect(store.shared).toBe(true)
  state.answering = false
  for (let i = 0; i < 10; i++) expect((await store.consume('key:1', limits, 0)).outcome).toBe('allowed')
  expect(state.calls).toBe(3)
  expect(store.shared).toBe(false)
  expect(events).toEqual({ fallbacks: 10, episodes: 1, recoveries: 0 })

  await vi.advanceTimersByTimeAsync(3000)
  expect(state.pings).toBe(3)
  expect(state.calls).toBe(3)
  state.answering = true
  await vi.advanceTimersByTimeAsync(1000)
  expect(store.shared).toBe(true)
  expect(events.recoveries).toBe(1)
  await store.consume('key:1', limits, 0)
  expect(state.calls).toBe(4)
  await store.close()
})

test('a miss between answers does not open the circuit: only 3 in a row do', async () => {
  const { primary, state } = flakyPrimary()
  const store = withFallback(primary, createMemoryStore(policy), {
    onFallback: () => {},
    onRecovery: () => {},
  })
  for (let round = 0; round < 5; round++) {
    state.answering = round % 2 === 0
    await store.consume('key:1', limits, 0)
    await store.consume('key:1', limits, 0)
  }
  expect(state.calls).toBe(10)
  await store.close()
})
