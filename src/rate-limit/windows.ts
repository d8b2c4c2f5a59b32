import type { Decision, Limits, WindowName, WindowState } from './rate-limit.port.js'

export const MINUTE_MS = 60_000
export const DAY_MS = 86_400_000

/**
 * Fixed windows aligned to the clock: each UTC minute, and each UTC day from midnight. A window admits
 * exactly its limit, and its reset instant is exact: the count goes back to zero at the window's end.
 */
export function windowStart(now: number, lengthMs: number): number {
  return now - (now % lengthMs)
}

export function windowState(name: WindowName, limit: number, count: number, now: number): WindowState {
  const lengthMs = name === 'minute' ? MINUTE_MS : DAY_MS
  return {
    name,
    limit,
    remaining: Math.max(0, limit - count),
    resetAt: windowStart(now, lengthMs) + lengthMs,
    lengthMs,
  }
}

export function windowStates(
  limits: Limits,
  counts: { minute: number; day: number },
  now: number,
): WindowState[] {
  return [
    windowState('minute', limits.perMinute, counts.minute, now),
    windowState('day', limits.perDay, counts.day, now),
  ]
}

/** The window the headers describe: fewest requests remaining; on a tie, the one that resets later. */
export function bindingWindow(windows: readonly WindowState[]): WindowState {
  return windows.reduce((best, window) =>
    window.remaining < best.remaining ||
    (window.remaining === best.remaining && window.resetAt > best.resetAt)
      ? window
      : best,
  )
}

/**
 * The windows as a client may use them, which the `X-RateLimit-*` headers and `GET /v1/rate_limit` both
 * describe: during a ban nothing remains in any window, and `resetAt` is when the window admits again: the
 * ban's end, or its own end if it is spent and ends later.
 */
export function windowsAsSeen(decision: Decision): WindowState[] {
  if (decision.outcome !== 'banned') return decision.windows
  const { bannedUntil } = decision
  return decision.windows.map((window) => ({
    ...window,
    remaining: 0,
    resetAt: window.remaining === 0 ? Math.max(window.resetAt, bannedUntil) : bannedUntil,
  }))
}

/** `Retry-After` of a refusal: whole seconds (RFC 9110 delta-seconds), at least 1. */
export function retryAfterOf(decision: { retryAfterMs: number }): string {
  return String(Math.max(1, Math.ceil(decision.retryAfterMs / 1000)))
}
