/**
 * A wait that every call of a client shares (after a 429), which runs a timer only while some call is
 * waiting for it: a client whose calls all gave up keeps no timer, and so no Node.js process, alive.
 * The wait itself stands: a call that comes later waits for what is left of it.
 */
export class SharedWait {
  /** When the wait is over, on the client's clock; undefined when there is none. */
  #until: number | undefined
  #timer: AbortController | undefined

  constructor(
    private readonly options: {
      sleep: (ms: number, signal: AbortSignal) => Promise<void>
      now: () => number
      /** Called once the wait is over. */
      onOver: () => void
    },
  ) {}

  get pending(): boolean {
    return this.#until !== undefined
  }

  /** Milliseconds left of the wait; 0 when there is none. */
  get leftMs(): number {
    return this.#until === undefined ? 0 : Math.max(0, this.#until - this.options.now())
  }

  /** Starts a wait of `ms` from now; no timer runs until a call attends. */
  begin(ms: number): void {
    this.#until = this.options.now() + ms
  }

  /** A call waits: runs the timer for what is left of the wait, unless it runs already. */
  attend(): void {
    if (this.#until === undefined || this.#timer) return
    const left = this.#until - this.options.now()
    if (left <= 0) {
      this.#over()
      return
    }
    const timer = new AbortController()
    this.#timer = timer
    const finish = () => {
      if (!timer.signal.aborted) this.#over()
    }
    this.options.sleep(left, timer.signal).then(finish, finish)
  }

  /** No call waits any more: stops the timer, keeps the wait. */
  desert(): void {
    this.#timer?.abort()
    this.#timer = undefined
  }

  #over(): void {
    this.#until = undefined
    this.#timer = undefined
    this.options.onOver()
  }
}
