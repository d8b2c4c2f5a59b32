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
 * `onRefused` is told the API's message when a call is answered 401 (the key was revoked, has expired or
 * was rotated meanwhile): a tab left open then stops spending its IP's unauthenticated limit on polls.
 */
export function clientFor(apiKey: string, onRefused?: (message: string) => void): PetstoreClient {
  return createPetstoreClient({
    baseUrl: new URL('/v1', window.location.origin).href,
    apiKey,
    maxRetries: 0,
    onWarning: () => {},
    onRetry: () => {},
    fetch: async (input, init) => {
      const response = await fetch(input, init)
      if (response.status === 401 && onRefused) {
        const body = (await response
          .clone()
          .json()
          .catch(() => undefined)) as { message?: unknown } | undefined
        onRefused(typeof body?.message === 'string' ? body.message : 'the service no longer accepts this key')
      }
      return response
    },
  })
}
