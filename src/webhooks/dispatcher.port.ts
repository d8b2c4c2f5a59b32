import type { Settled } from './settle.js'

/** What a dispatcher tells the metrics: every attempt's end, and the commit-to-first-attempt lag. */
export interface DispatcherObserver {
  settled(outcome: Settled): void
  lag(seconds: number): void
}

/** A dispatcher, run on this thread (`createDispatcher`) or on one of its own (dispatcher-thread.ts). */
export interface Dispatcher {
  start(): void
  /**
   * Resolves after a step begun after this call found nothing to do (nothing due by the clock, nothing
   * queued, in flight or left to write down): from then on this dispatcher sends nothing until
   * something new is written or the clock reaches a later due time. Tests of "nothing was sent" wait on
   * it, with a fake clock where a moment matters, instead of sleeping. Rejects when a step fails or the
   * dispatcher stops.
   */
  whenIdle(): Promise<void>
  /** Requests in flight per account (the metrics' top accounts). */
  inFlightByAccount(): Map<number, number>
  /**
   * No new attempts; those in flight may finish until `deadlineMs`, then are aborted and given back
   * (pending again, free to be taken). Resolves once everything is written down and every lease let go.
   */
  stop(deadlineMs: number): Promise<void>
}
