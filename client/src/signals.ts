/**
 * The signal a call runs under: the caller's, a timeout over the whole call (retries and waits
 * included), both, or none. AbortSignal.any needs Node 20.3 or a current browser.
 */
export function callSignal(
  signal: AbortSignal | undefined,
  timeoutMs: number | undefined,
): AbortSignal | undefined {
  if (timeoutMs === undefined) return signal
  const timeout = AbortSignal.timeout(timeoutMs)
  return signal ? AbortSignal.any([signal, timeout]) : timeout
}

/**
 * Resolves after `ms` milliseconds; rejects with the signal's reason as soon as it aborts.
 *
 * @example await sleep(1000, AbortSignal.timeout(500)) // rejects with a TimeoutError after 500 ms
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason)
      return
    }
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
