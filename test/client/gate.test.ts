import { describe, expect, test } from 'vitest'
import { backoffDelay, retryDelay } from '../../client/src/backoff.js'
import { RateLimitGate } from '../../client/src/gate.js'

/** The client's rate-limit gate on its own: a hand-driven clock and sleeps that end when told to. */
function createGate() {
  let now = 1_000_000
  const sleeps: { ms: number; end: () => void; signal: AbortSignal }[] = []
  const gate = new RateLimitGate({
    now: () => now,
    sleep: (ms, signal) => new Promise<void>((resolve) => sleeps.push({ ms, end: resolve, signal })),
    backoff: { baseDelayMs: 500, maxDelayMs: 20_000, random: () => 0.5 },
  })
  /** Resolves `acquire()` into 'sent' or the error, without waiting for a pending one. */
  const granted = () => {
    const state = { value: 'waiting' as unknown }
    gate.acquire().then(
      () => {
        state.value = 'sent'
      },
      (error) => {
        state.value = error
      },
    )
    return state
  }
  const tick = () => new Promise((resolve) => setImmediate(resolve))
  return { gate, sleeps, granted, tick, advance: (ms: number) => (now += ms) }
}

describe('RateLimitGate', () => {
  test('sends one request alone while nothing is known, then as many as the window has left', async () => {
    const { gate, granted, tick } = createGate()
    const first = granted()
    const second = granted()
    await tick()
    expect([first.value, second.value]).toEqual(['sent', 'waiting'])
    gate.settle({ limit: 60, remaining: 3, reset: 100 })
    const more = [granted(), granted(), granted()]
    await tick()
    // The second request and two more fill the three left; the last waits.
    expect([second.value, ...more.map((m) => m.value)]).toEqual(['sent', 'sent', 'sent', 'waiting'])
  })

  test('after a 429 nobody sends until one shared wait of Retry-After plus backoff is over', async () => {
    const { gate, sleeps, granted, tick } = createGate()
    await gate.acquire()
    gate.refuse({ limit: 60, remaining: 0, reset: 100 }, 30_000)
    const waiting = [granted(), granted()]
    await tick()
    expect(waiting.map((w) => w.value)).toEqual(['waiting', 'waiting'])
    expect(sleeps.map((sleep) => sleep.ms)).toEqual([30_000 + 250]) // one timer, never under Retry-After
    sleeps[0]?.end()
    await tick()
    // The window is unknown again: one request goes alone to learn it.
    expect(waiting.map((w) => w.value)).toEqual(['sent', 'waiting'])
  })

  test('a late 429 from a window already waited out starts no new wait', async () => {
    const { gate, sleeps, granted, tick } = createGate()
    await gate.acquire()
    gate.settle({ remaining: 2, reset: 100 })
    await gate.acquire()
    await gate.acquire()
    gate.refuse({ remaining: 0, reset: 100 }, 1_000)
    granted()
    await tick()
    sleeps[0]?.end()
    await tick()
    gate.refuse({ remaining: 0, reset: 100 }, 1_000) // the other request of that window
    const next = granted()
    await tick()
    expect(sleeps).toHaveLength(1)
    expect(next.value).toBe('waiting') // behind the one learning the new window, not behind a wait
  })

  test('a ban fails every call at once, waiting or new, until it ends', async () => {
    const { gate, granted, tick, advance } = createGate()
    await gate.acquire()
    const waiting = granted()
    const banned = new Error('banned')
    gate.block(1_000_000 + 60_000, () => banned)
    await tick()
    expect(waiting.value).toBe(banned)
    await expect(gate.acquire()).rejects.toBe(banned)
    advance(60_000)
    await expect(gate.acquire()).resolves.toBeUndefined()
  })

  test('a call that gives up leaves the queue, and no timer runs for a wait nobody attends', async () => {
    const { gate, sleeps, tick } = createGate()
    await gate.acquire()
    gate.refuse({ remaining: 0, reset: 100 }, 5_000)
    const controller = new AbortController()
    const call = gate.acquire(controller.signal)
    await tick()
    expect(sleeps).toHaveLength(1)
    expect(sleeps[0]?.signal.aborted).toBe(false)
    controller.abort(new Error('gave up'))
    await expect(call).rejects.toThrow('gave up')
    expect(sleeps[0]?.signal.aborted).toBe(true)
  })
})

describe('backoff', () => {
  test('full jitter: from 0 up to base · 2^attempt, capped', () => {
    const policy = (random: number) => ({ baseDelayMs: 500, maxDelayMs: 20_000, random: () => random })
    expect(backoffDelay(0, policy(0.999))).toBe(499)
    expect(backoffDelay(3, policy(0.5))).toBe(2_000)
    expect(backoffDelay(10, policy(0.999))).toBe(19_980)
    expect(backoffDelay(4, policy(0))).toBe(0)
  })

  test('a retry never comes before Retry-After', () => {
    const policy = { baseDelayMs: 500, maxDelayMs: 20_000, random: () => 0 }
    expect(retryDelay(2, 7_000, policy)).toBe(7_000)
    expect(retryDelay(2, undefined, policy)).toBe(0)
  })
})
