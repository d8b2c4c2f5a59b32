/** How the page writes numbers, instants and spans of time: in the reader's locale and time zone. */

const numbers = new Intl.NumberFormat()

/** `12,345` (grouped the reader's way). */
export const formatNumber = (value: number): string => numbers.format(value)

/** An instant in the reader's zone; the UTC instant on hover (the `title`) and in `datetime`. */
export function Time({ at }: { at: string | number }) {
  const date = new Date(at)
  const utc = date.toISOString()
  return (
    <time dateTime={utc} title={`${utc.replace('T', ' ').replace(/\.\d+Z$/, 'Z')} (UTC)`}>
      {date.toLocaleString()}
    </time>
  )
}

/** `2 h 05 min`, `4 min 12 s`, `9 s`: how long until something happens. */
export function formatCountdown(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000))
  const hours = Math.floor(total / 3600)
  const minutes = Math.floor((total % 3600) / 60)
  const seconds = total % 60
  const pad = (value: number) => String(value).padStart(2, '0')
  if (hours > 0) return `${hours} h ${pad(minutes)} min`
  if (minutes > 0) return `${minutes} min ${pad(seconds)} s`
  return `${seconds} s`
}
