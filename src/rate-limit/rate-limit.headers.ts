import type { Decision, WindowState } from './rate-limit.port.js'
import { bindingWindow } from './windows.js'

const seconds = (ms: number) => Math.ceil(ms / 1000)

/**
 * The rate-limit headers of a response: X-RateLimit-* for the binding window (during a ban: nothing
 * remains until the ban ends), plus the IETF draft RateLimit-Policy (both windows) and RateLimit.
 */
export function rateLimitHeaders(decision: Decision, now: number): Record<string, string> {
  const window = bindingWindow(decision.windows)
  const banned = decision.outcome === 'banned'
  const remaining = banned ? 0 : window.remaining
  const resetAt = banned ? Math.max(decision.bannedUntil, window.resetAt) : window.resetAt
  return {
    'x-ratelimit-limit': String(window.limit),
    'x-ratelimit-remaining': String(remaining),
    'x-ratelimit-reset': String(seconds(resetAt)),
    'ratelimit-policy': decision.windows.map(policyItem).join(', '),
    ratelimit: `"${window.name}";r=${remaining};t=${seconds(resetAt - now)}`,
  }
}

function policyItem(window: WindowState): string {
  return `"${window.name}";q=${window.limit};w=${window.lengthMs / 1000}`
}
