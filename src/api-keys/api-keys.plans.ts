import type { Limits } from '../rate-limit/rate-limit.port.js'

/** Requests per window, by plan, as the spec's table says. Enterprise numbers live on each key. */
export const PLANS = ['free', 'pro', 'business', 'enterprise'] as const
export type Plan = (typeof PLANS)[number]

const PLAN_LIMITS: Readonly<Record<Exclude<Plan, 'enterprise'>, Limits>> = {
  free: { perMinute: 60, perDay: 1_000 },
  pro: { perMinute: 300, perDay: 10_000 },
  business: { perMinute: 1_000, perDay: 100_000 },
}

/** The limits in force for a key: its plan's, or for Enterprise the custom numbers stored with it. */
export function limitsFor(plan: Plan, custom: Partial<Limits> = {}): Limits {
  if (plan !== 'enterprise') return PLAN_LIMITS[plan]
  if (custom.perMinute === undefined || custom.perDay === undefined) {
    throw new Error('an enterprise key needs both custom limits')
  }
  return { perMinute: custom.perMinute, perDay: custom.perDay }
}

export function isPlan(value: string): value is Plan {
  return (PLANS as readonly string[]).includes(value)
}

/** What a key may call (CONTRACT §10): `read` only GET and HEAD, `write` every operation. */
export const SCOPES = ['read', 'write'] as const
export type Scope = (typeof SCOPES)[number]

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value)
}
