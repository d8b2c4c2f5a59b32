import { UsageError } from './io.js'

const UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }
const DURATION = /^(\d{1,6})([smhd])$/
/** An ISO 8601 instant with a date, a time and a zone: `2027-01-31T00:00:00Z`, `...+01:00`. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/

/** `90d`, `12h`, `30m`, `45s`, or `0`: milliseconds. */
export function parseDuration(option: string, text: string): number {
  if (text === '0') return 0
  const match = DURATION.exec(text)
  if (!match)
    throw new UsageError(`${option} must be a duration like 90d, 12h, 30m or 0 (got ${JSON.stringify(text)})`)
  return Number(match[1]) * (UNIT_MS[match[2] ?? ''] ?? 0)
}

/**
 * `--expires WHEN`: a duration from `now` (`90d`) or an ISO 8601 instant, in the future; `never` (where
 * allowed) gives null.
 */
export function parseExpiry(text: string, now: number, allowNever: boolean): number | null {
  if (text === 'never' && allowNever) return null
  const at = DURATION.test(text)
    ? now + parseDuration('--expires', text)
    : INSTANT.test(text)
      ? Date.parse(text)
      : Number.NaN
  const forms = allowNever
    ? 'a duration like 90d, an ISO 8601 instant, or never'
    : 'a duration like 90d or an ISO 8601 instant'
  if (Number.isNaN(at)) throw new UsageError(`--expires must be ${forms} (got ${JSON.stringify(text)})`)
  if (at <= now) throw new UsageError(`--expires must be in the future (got ${new Date(at).toISOString()})`)
  return at
}
