/**
 * Who waits for the dispatcher's next idle step (`whenIdle`): each waiter is told by the first idle step
 * begun after it started waiting, or rejected with why there will be none (a failed step, a stop).
 */
export function createIdleWaiters() {
  let waiters: { after: number; resolve: () => void; reject: (error: Error) => void }[] = []
  return {
    /** Waits for an idle step numbered above `after`. */
    wait(after: number): Promise<void> {
      return new Promise<void>((resolve, reject) => waiters.push({ after, resolve, reject }))
    },
    /** Tells every waiter for a step begun before `begun` that it was idle, or why it never will be. */
    tell(begun: number, error?: Error): void {
      const told = waiters.filter((waiter) => waiter.after < begun)
      waiters = waiters.filter((waiter) => waiter.after >= begun)
      for (const waiter of told) error ? waiter.reject(error) : waiter.resolve()
    },
  }
}
