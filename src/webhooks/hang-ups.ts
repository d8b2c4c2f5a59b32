import { setMaxListeners } from 'node:events'
import type { ClaimedAttempt } from './attempts.repository.js'

/**
 * What the lanes' attempts in flight listen to, one signal for all, and the attempts hung up on. The
 * signal is aborted when this instance's leases are no longer surely its own (`hangUp`: each attempt is
 * then given back by the next step instead of written down; a new signal replaces it), or at SIGTERM
 * after the drain (`abortAll`: none is written down, the dispatcher gives them back; that one is the last).
 */
export function createHangUps(maxInFlight: number) {
  const listened = () => {
    const controller = new AbortController()
    // Each attempt in flight listens to it: as many listeners as sockets are normal, not a leak.
    setMaxListeners(maxInFlight + 1, controller.signal)
    return controller
  }
  let current = listened()
  let stopped = false
  /** Attempts hung up on, for the next step to give back. */
  let hungUp: ClaimedAttempt[] = []

  return {
    /** What an attempt starting now listens to. */
    get signal(): AbortSignal {
      return current.signal
    },
    /** After `abortAll`: nothing starts, and nothing aborted is given back by a step. */
    get stopped(): boolean {
      return stopped
    },
    hangUp(): void {
      const signaled = current
      current = listened()
      signaled.abort()
    },
    abortAll(): void {
      stopped = true
      current.abort()
    },
    /** An attempt that a hang-up aborted has ended: the next step gives it back. */
    add(claimed: ClaimedAttempt): void {
      hungUp.push(claimed)
    },
    /** Attempts hung up on since the last call (the step gives them back). */
    take(): ClaimedAttempt[] {
      const taken = hungUp
      hungUp = []
      return taken
    },
    /** A step that failed puts them back, ahead of those hung up on since. */
    putBack(claimed: readonly ClaimedAttempt[]): void {
      hungUp = [...claimed, ...hungUp]
    },
    get count(): number {
      return hungUp.length
    },
  }
}
