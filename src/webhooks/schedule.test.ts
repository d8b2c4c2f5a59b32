import { expect, it } from 'vitest'
import { MAX_ATTEMPTS, RETRY_AFTER_CAP_MS, RETRY_DELAYS_MS, retryDelayMs } from './schedule.js'

const HOUR = 60 * 60 * 1000
/** Jitter's draw in the middle: no move. */
const middle = () => 0.5

it('retries on the schedule, each delay moved by up to a fifth either way, and stops after the 8th attempt', () => {
  const delays = Array.from({ length: MAX_ATTEMPTS }, (_, index) =>
    retryDelayMs(index + 1, { scale: 1, random: middle }),
  )
  expect(delays).toEqual([5_000, 300_000, 1_800_000, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR, undefined])
  expect(retryDelayMs(1, { scale: 1, random: () => 0 })).toBe(4_000)
  expect(retryDelayMs(1, { scale: 1, random: () => 1 })).toBe(6_000)
  expect(RETRY_DELAYS_MS).toHaveLength(MAX_ATTEMPTS - 1)
})

it('takes a Retry-After as a floor, capped at an hour, and scales it with the rest', () => {
  expect(retryDelayMs(1, { scale: 1, retryAfterMs: 120_000, random: middle })).toBe(120_000)
  expect(retryDelayMs(1, { scale: 1, retryAfterMs: 5 * HOUR, random: middle })).toBe(RETRY_AFTER_CAP_MS)
  // Below the schedule's own delay: the schedule stands.
  expect(retryDelayMs(4, { scale: 1, retryAfterMs: HOUR, random: middle })).toBe(2 * HOUR)
  expect(retryDelayMs(1, { scale: 0.01, retryAfterMs: 5 * HOUR, random: middle })).toBe(
    RETRY_AFTER_CAP_MS / 100,
  )
  expect(retryDelayMs(2, { scale: 0.01, random: middle })).toBe(3_000)
})
