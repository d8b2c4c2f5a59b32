import type { BanPolicy, Decision, Limits, RateLimitStore, WindowState } from './rate-limit.port.js'
import { DAY_MS, MINUTE_MS, windowStart, windowStates } from './windows.js'

/** Counts of one subject; a window's counts belong to the window starting at its `…Start`. */
interface Entry {
  minuteStart: number
  minuteCount: number
  minuteRefused: number
  dayStart: number
  dayCount: number
  dayRefused: number
  bannedUntil: number
}

export interface MemoryStoreOptions extends BanPolicy {
  /** Most subjects kept; past it an idle one is forgotten. */
  maxSubjects?: number
  /** Subjects never evicted while others can be (API keys: as many as the key table holds). */
  keep?: (subject: string) => boolean
}

/** The in-process store answers synchronously: no I/O is ever awaited on the request path. */
export interface MemoryStore extends RateLimitStore {
  consume(subject: string, limits: Limits, now: number): Decision
  peek(subject: string, limits: Limits, now: number): Decision
  /** Subjects held now; for tests and diagnostics. */
  readonly size: number
}

/** Default cap: about 20 MB of state, far above any one instance's distinct callers in a day. */
export const DEFAULT_MAX_SUBJECTS = 100_000
/** Expired entries looked at per request: amortised clean-up, no timer. */
const SWEEP_PER_REQUEST = 2
/** Least recently seen entries considered when one must go. */
export const EVICTION_CANDIDATES = 64

/**
 * The in-process store: synchronous, no I/O, no timers. Memory is bounded: the Map is kept in
 * least-recently-seen order, expired entries at its front are dropped as requests arrive, and past
 * `maxSubjects` one entry goes: the least recently seen that is not kept, not banned and not refused in
 * its current windows (so a flood of new IPs cannot wipe a ban, a quota a caller is waiting out, or a
 * key's counts); only when none of the oldest candidates qualifies does the oldest go.
 */
export function createMemoryStore(options: MemoryStoreOptions): MemoryStore {
  const entries = new Map<string, Entry>()
  const maxSubjects = options.maxSubjects ?? DEFAULT_MAX_SUBJECTS

  function current(subject: string, now: number): Entry {
    const found = entries.get(subject)
    const entry = found ?? emptyEntry()
    rollWindows(entry, now)
    return entry
  }

  function remember(subject: string, entry: Entry, now: number): void {
    entries.delete(subject)
    entries.set(subject, entry)
    sweep(now)
    if (entries.size > maxSubjects) evictOne(now)
  }

  function evictOne(now: number): void {
    let looked = 0
    for (const [subject, entry] of entries) {
      if (looked++ >= EVICTION_CANDIDATES) break
      if (!options.keep?.(subject) && !holdsLimits(entry, now)) {
        entries.delete(subject)
        return
      }
    }
    const oldest = entries.keys().next()
    if (!oldest.done) entries.delete(oldest.value)
  }

  function sweep(now: number): void {
    let looked = 0
    for (const [subject, entry] of entries) {
      if (looked++ >= SWEEP_PER_REQUEST || !isExpired(entry, now)) return
      entries.delete(subject)
    }
  }

  return {
    shared: false,
    get size() {
      return entries.size
    },
    consume(subject: string, limits: Limits, now: number): Decision {
      const entry = current(subject, now)
      const decision = decide(entry, limits, options, now)
      remember(subject, entry, now)
      return decision
    },
    peek(subject: string, limits: Limits, now: number): Decision {
      const entry = { ...current(subject, now) }
      return decide(entry, limits, { ...options, banAfter: Number.POSITIVE_INFINITY }, now, false)
    },
    reset(subject: string): void {
      entries.delete(subject)
    },
    close: async () => {
      entries.clear()
    },
  }
}

function emptyEntry(): Entry {
  return {
    minuteStart: 0,
    minuteCount: 0,
    minuteRefused: 0,
    dayStart: 0,
    dayCount: 0,
    dayRefused: 0,
    bannedUntil: 0,
  }
}

function rollWindows(entry: Entry, now: number): void {
  const minuteStart = windowStart(now, MINUTE_MS)
  if (entry.minuteStart !== minuteStart)
    Object.assign(entry, { minuteStart, minuteCount: 0, minuteRefused: 0 })
  const dayStart = windowStart(now, DAY_MS)
  if (entry.dayStart !== dayStart) Object.assign(entry, { dayStart, dayCount: 0, dayRefused: 0 })
}

/** A ban, or a refusal in a current window: forgetting it would admit requests the limits refuse. */
function holdsLimits(entry: Entry, now: number): boolean {
  return entry.bannedUntil > now || entry.minuteRefused > 0 || entry.dayRefused > 0
}

function isExpired(entry: Entry, now: number): boolean {
  return entry.dayStart < windowStart(now, DAY_MS) && entry.bannedUntil <= now
}

/**
 * The one decision, applied to `entry` in place: admit when both windows admit (counting in both),
 * otherwise count a refusal in the window that refused, and start a ban past `banAfter` refusals.
 */
function decide(entry: Entry, limits: Limits, policy: BanPolicy, now: number, count = true): Decision {
  const states = () => windowStates(limits, { minute: entry.minuteCount, day: entry.dayCount }, now)
  if (entry.bannedUntil > now) {
    return {
      outcome: 'banned',
      windows: states(),
      bannedUntil: entry.bannedUntil,
      retryAfterMs: entry.bannedUntil - now,
    }
  }
  if (entry.minuteCount < limits.perMinute && entry.dayCount < limits.perDay) {
    if (count) {
      entry.minuteCount++
      entry.dayCount++
    }
    return { outcome: 'allowed', windows: states() }
  }
  const windows = states()
  const refusedBy = latestExhausted(windows)
  const refused = refusedBy.name === 'minute' ? ++entry.minuteRefused : ++entry.dayRefused
  if (refused > policy.banAfter) {
    entry.bannedUntil = now + policy.banMs
    entry.minuteRefused = 0
    entry.dayRefused = 0
    return { outcome: 'banned', windows, bannedUntil: entry.bannedUntil, retryAfterMs: policy.banMs }
  }
  return { outcome: 'limited', windows, refusedBy, retryAfterMs: refusedBy.resetAt - now }
}

/** Of the exhausted windows, the one that frees last: a retry before it would be refused again. */
function latestExhausted(windows: WindowState[]): WindowState {
  const exhausted = windows.filter((window) => window.remaining === 0)
  return exhausted.reduce((latest, window) => (window.resetAt > latest.resetAt ? window : latest))
}
