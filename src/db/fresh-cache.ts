import { createBoundedMap } from '../bounded-map.js'
import type { ChangeToken } from './handle.js'

/** A cache lookup: the value when it is provably fresh, and the token a new value must be stored under. */
export interface Lookup<V> {
  value: V | undefined
  token: unknown
}

/**
 * The one cache shape of the service: results of database reads, kept only while the database's change
 * token is the one read *before* the read that produced them. Any commit (this process's, another
 * process's, an operator's) changes the token and so empties the cache on the next lookup: a write is
 * visible to the very next read. Without a token (PostgreSQL) nothing is ever kept.
 *
 * @example
 * const { value, token } = cache.lookup(key)
 * if (value !== undefined) return value
 * return cache.store(key, token, readFromDatabase())
 */
export function createFreshCache<V>(changeToken: ChangeToken | undefined, maxEntries: number) {
  const entries = createBoundedMap<string, V>(maxEntries)
  let current: unknown

  return {
    lookup(key: string): Lookup<V> {
      if (!changeToken) return { value: undefined, token: undefined }
      const token = changeToken()
      if (token !== current) {
        entries.clear()
        current = token
      }
      return { value: entries.get(key), token }
    },
    /** Keeps `value` if the token is still the one its lookup saw; returns `value` either way. */
    store(key: string, token: unknown, value: V): V {
      if (!changeToken || token !== current) return value
      return entries.set(key, value)
    },
  }
}

export type FreshCache<V> = ReturnType<typeof createFreshCache<V>>
