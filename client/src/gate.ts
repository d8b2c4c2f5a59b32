import { type BackoffPolicy, backoffDelay } from './backoff.js'
import type { RateLimitState } from './rate-limit-state.js'
import { SharedWait } from './shared-wait.js'

export interface GateOptions {
  sleep: (ms: number, signal: AbortSignal) => Promise<void>
  now: () => number
  backoff: BackoffPolicy
}

interface Waiter {
  grant(): void
  fail(error: unknown): void
}

/** What the gate knows of the key's binding window, from X-RateLimit-Reset and -Remaining. */
interface Window {
  reset: number
  remaining: number
}

/**
 * The one gate of a client that every request passes before it is sent, so that concurrent calls
 * cannot walk into a ban together:
 *
 * - After a 429 `rate_limited` nobody sends until one shared wait, Retry-After plus a jittered backoff
 *   that grows with consecutive refusals, is over.
 * - At most as many requests are in flight as the last response said were `remaining`; when nothing
 *   is known (the first request, after a wait, after a window ran dry) one request goes alone to learn
 *   it. So a burst sends no more than the window admits, plus at most one refused request per window.
 * - While the key is banned (or asked to wait longer than the client waits), every call fails at once
 *   without sending.
 *
 * Windows are told apart by their X-RateLimit-Reset, on the service's clock, so late responses of a
 * window already waited out change nothing and the client's clock is never compared with it.
 */
export class RateLimitGate {
  #inflight = 0
  #window: Window | undefined
  /** The reset of the last window waited out: news of it, or of any earlier one, is stale. */
  #expired = -1
  /** The reset of the window whose 429 started the current wait. */
  #waitReset: number | undefined
  readonly #wait: SharedWait
  #refusals = 0
  #block: { until: number; error: () => Error } | undefined
  readonly #queue: Waiter[] = []

  constructor(private readonly options: GateOptions) {
    this.#wait = new SharedWait({ sleep: options.sleep, now: options.now, onOver: () => this.#waitOver() })
  }

  /** Milliseconds left of the shared wait after a 429; 0 when there is none. */
  get waitLeftMs(): number {
    return this.#wait.leftMs
  }

  /** Resolves when a request may be sent; call exactly one of settle, refuse or block afterwards. */
  async acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted()
    this.#throwIfBlocked()
    if (this.#queue.length === 0 && this.#canSend()) {
      this.#inflight++
      return
    }
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.#queue.splice(this.#queue.indexOf(waiter), 1)
        if (this.#queue.length === 0) this.#wait.desert()
        reject(signal?.reason)
      }
      const waiter: Waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort)
          this.#inflight++
          resolve()
        },
        fail: (error) => {
          signal?.removeEventListener('abort', onAbort)
          reject(error)
        },
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.#queue.push(waiter)
      this.#wait.attend()
    })
  }

  /** The request got a response other than a 429 (`state` from its headers), or none at all. */
  settle(state: RateLimitState | undefined): void {
    this.#inflight--
    if (state?.remaining !== undefined) {
      this.#refusals = 0
      this.#learn(state.reset, state.remaining)
    }
    this.#pump()
  }

  /** The request was refused with 429 `rate_limited`: everybody waits, unless the news is stale. */
  refuse(state: RateLimitState | undefined, retryAfterMs: number): void {
    this.#inflight--
    const reset = state?.reset
    const stale = reset !== undefined && reset <= this.#expired
    if (!this.#wait.pending && !stale) {
      this.#waitReset = reset
      this.#wait.begin(retryAfterMs + backoffDelay(this.#refusals++, this.options.backoff))
      if (this.#queue.length > 0) this.#wait.attend()
    }
    this.#pump()
  }

  /** Until `until` (the client's clock), every call, waiting or new, fails with `error()` unsent. */
  block(until: number, error: () => Error): void {
    this.#inflight--
    this.#block = { until, error }
    this.#wait.desert()
    for (const waiter of this.#queue.splice(0)) waiter.fail(error())
  }

  #canSend(): boolean {
    return !this.#wait.pending && (this.#inflight === 0 || this.#inflight < (this.#window?.remaining ?? 0))
  }

  #pump(): void {
    while (this.#queue.length > 0 && this.#canSend()) this.#queue.shift()?.grant()
  }

  #waitOver(): void {
    this.#expired = Math.max(this.#expired, this.#waitReset ?? this.#window?.reset ?? -1)
    this.#window = undefined
    this.#pump()
  }

  #throwIfBlocked(): void {
    if (!this.#block) return
    if (this.options.now() < this.#block.until) throw this.#block.error()
    this.#block = undefined
    this.#window = undefined
  }

  /** A newer window replaces the old; within one window, `remaining` only goes down. */
  #learn(reset: number | undefined, remaining: number): void {
    const windowReset = reset ?? this.#window?.reset ?? 0
    if (windowReset <= this.#expired) return
    if (!this.#window || windowReset > this.#window.reset) this.#window = { reset: windowReset, remaining }
    else if (windowReset === this.#window.reset)
      this.#window.remaining = Math.min(this.#window.remaining, remaining)
  }
}
