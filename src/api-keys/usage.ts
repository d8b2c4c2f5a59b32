import type { Logger } from 'pino'
import type { Clock } from '../clock.js'
import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { createApiKeyRepository } from './api-keys.repository.js'
import { createUsageRepository } from './usage.repository.js'

/** How `keys usage` groups responses (CONTRACT §10): 429 apart from the other 4xx; 1xx–3xx with 2xx. */
export const STATUS_CLASSES = ['2xx', '4xx', '429', '5xx'] as const
export type StatusClass = (typeof STATUS_CLASSES)[number]

export function statusClassOf(status: number): StatusClass {
  if (status === 429) return '429'
  if (status >= 500) return '5xx'
  return status >= 400 ? '4xx' : '2xx'
}

/** `2026-11-23`: the UTC day of a Unix-ms instant. */
export const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)

const DAY_MS = 86_400_000

/** How often each instance adds what it counted to the database; a crash loses at most this much. */
export const USAGE_FLUSH_MS = 5_000

export interface Tally {
  apiKeyId: number
  day: string
  statusClass: StatusClass
  requests: number
}

export type UsageRecorder = ReturnType<typeof createUsageRecorder>

/**
 * Requests per account, UTC day and status class, counted in memory (no database write per request) and
 * added to the `key_usage` rows every USAGE_FLUSH_MS, on every instance, and on shutdown. The latest request
 * of each account is written to `api_keys.last_used_at` at the same time. A failed flush keeps its counts
 * for the next one.
 */
export function createUsageRecorder(deps: { handle: DbHandle; clock: Clock; logger: Logger }) {
  const { handle, clock, logger } = deps
  const keys = createApiKeyRepository(handle)
  const usage = createUsageRepository(handle)
  let tallies = new Map<string, Tally>()
  let lastUsed = new Map<number, number>()

  /** Called for every response: two map updates, no date formatting (the day is named once per tally). */
  function record(apiKeyId: number, status: number): void {
    const now = clock.now()
    const dayNumber = Math.floor(now / DAY_MS)
    const statusClass = statusClassOf(status)
    const id = `${apiKeyId}|${dayNumber}|${statusClass}`
    const tally = tallies.get(id)
    if (tally) tally.requests++
    else tallies.set(id, { apiKeyId, day: utcDay(now), statusClass, requests: 1 })
    lastUsed.set(apiKeyId, now)
  }

  async function flush(): Promise<void> {
    if (tallies.size === 0) return
    const batch = tallies
    const used = lastUsed
    tallies = new Map()
    lastUsed = new Map()
    try {
      await handle.write(async (trx) => {
        await usage.add(trx, rowsOf([...batch.values()]))
        for (const [apiKeyId, at] of used) await keys.markUsedIn(trx, apiKeyId, at)
      })
    } catch (error) {
      for (const [id, tally] of batch) {
        const newer = tallies.get(id)
        if (newer) newer.requests += tally.requests
        else tallies.set(id, tally)
      }
      for (const [apiKeyId, at] of used) lastUsed.set(apiKeyId, Math.max(at, lastUsed.get(apiKeyId) ?? 0))
      throw error
    }
  }

  const timer = setInterval(() => {
    flush().catch((error) => logger.warn({ err: error }, 'usage flush failed: counts kept for the next one'))
  }, USAGE_FLUSH_MS)
  timer.unref()

  return {
    record,
    flush,
    /** Stops the timer and writes what is left. */
    close: async () => {
      clearInterval(timer)
      await flush()
    },
  }
}

/** Adds counts to the accounts' `key_usage` rows (the demo's past days; the recorder has its own). */
export function addUsage(handle: DbHandle, trx: Db, tallies: readonly Tally[]): Promise<void> {
  return createUsageRepository(handle).add(trx, rowsOf(tallies))
}

const rowsOf = (tallies: readonly Tally[]) =>
  tallies.map((tally) => ({
    api_key_id: tally.apiKeyId,
    day: tally.day,
    class: tally.statusClass,
    requests: tally.requests,
  }))

export interface UsageDay {
  day: string
  requests: Record<StatusClass, number>
}

/** The account's requests per UTC day, the `days` days up to `now`'s, oldest first (days without traffic as 0). */
export async function usageOf(
  handle: DbHandle,
  apiKeyId: number,
  days: number,
  now: number,
): Promise<UsageDay[]> {
  const dayList = Array.from({ length: days }, (_, index) => utcDay(now - (days - 1 - index) * DAY_MS))
  const rows = await createUsageRepository(handle).since(apiKeyId, dayList[0] ?? '')
  return dayList.map((day) => {
    const requests = { '2xx': 0, '4xx': 0, '429': 0, '5xx': 0 }
    for (const row of rows)
      if (row.day === day && row.class in requests) requests[row.class as StatusClass] += row.requests
    return { day, requests }
  })
}
