import { createPetstoreClient, type PetstoreClient } from '@petstore/client'

/** The one place the pasted key is kept: this tab's sessionStorage (CONTRACT §15), never a cookie. */
const STORAGE_KEY = 'petstore.dashboard.apiKey'

/** Storage the browser refuses (disabled, full) only means the key is not kept across a reload. */
function tryStorage<T>(use: () => T, otherwise: T): T {
  try {
    return use()
  } catch {
    return otherwise
  }
}

export const storedKey = (): string | null => tryStorage(() => sessionStorage.getItem(STORAGE_KEY), null)
export const storeKey = (apiKey: string): void =>
  tryStorage(() => sessionStorage.setItem(STORAGE_KEY, apiKey), undefined)
export const forgetKey = (): void => tryStorage(() => sessionStorage.removeItem(STORAGE_KEY), undefined)

/**
 * The typed client for this service's own /v1, sending the key as `Authorization: Bearer` only. A page
 * shows an error at once rather than retrying behind the partner's back, so retries are off.
 */
export function clientFor(apiKey: string): PetstoreClient {
  return createPetstoreClient({
    baseUrl: new URL('/v1', window.location.origin).href,
    apiKey,
    maxRetries: 0,
    onWarning: () => {},
    onRetry: () => {},
  })
}
