import { setTimeout as sleep } from 'node:timers/promises'

/**
 * The database did not answer within the request's deadline (PETSTORE_DB_TIMEOUT_MS). The request gets 503
 * `unavailable`; for a write the outcome may be unknown (CONTRACT §13: a retry with the same
 * Idempotency-Key is safe).
 */
export class DatabaseTimeoutError extends Error {
  readonly code = 'PETSTORE_DB_TIMEOUT'

  constructor(what: string, ms: number) {
    super(`${what} did not finish within ${ms} ms`)
    this.name = 'DatabaseTimeoutError'
  }
}

/**
 * `work`, or a DatabaseTimeoutError once `ms` have passed (the work itself goes on: its caller must make
 * sure it ends, and `work`'s late failure is swallowed).
 */
export function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DatabaseTimeoutError(what, ms)), ms)
  })
  work.catch(() => {})
  return Promise.race([work, expired]).finally(() => clearTimeout(timer))
}

/** SQLITE_BUSY, SQLITE_BUSY_SNAPSHOT, SQLITE_LOCKED...: another connection holds the lock now. */
export const isBusy = (error: unknown) =>
  /^SQLITE_(BUSY|LOCKED)/.test(String((error as { code?: unknown })?.code))

/** First and longest pause between two attempts to take SQLite's write lock. */
export const FIRST_PAUSE_MS = 2
export const LONGEST_PAUSE_MS = 50

/**
 * Runs `attempt` until it does not fail with `SQLITE_BUSY`, pausing between attempts on timers (never
 * busy-waiting on the event loop, which would stall every other request), at most `ms` in all; then
 * DatabaseTimeoutError. Each attempt must be a whole transaction, so retrying it is safe.
 */
export async function retryWhileBusy<T>(attempt: () => Promise<T>, ms: number, what: string): Promise<T> {
  const giveUpAt = Date.now() + ms
  for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, LONGEST_PAUSE_MS)) {
    try {
      return await attempt()
    } catch (error) {
      const left = giveUpAt - Date.now()
      if (!isBusy(error)) throw error
      if (left <= 0) throw new DatabaseTimeoutError(what, ms)
      await sleep(Math.min(pause, left))
    }
  }
}
