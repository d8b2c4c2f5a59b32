import { createBoundedMap } from '../bounded-map.js'
import { inSpanMaybeAsync, tracingEnabled } from '../tracing/tracing.js'
import type { ChangeToken } from './handle.js'

/**
 * The one cache shape of the service: results of database reads, kept only while the database's change
 * token is the one read *before* the read that produced them. Any commit (this process's, another
 * process's, an operator's) changes the token and so empties the cache on the next lookup: a write is
 * visible to the very next read. Without a token nothing is ever kept.
 *
 * A read still in flight is shared too, by the callers that got the same token: equal tokens mean no
 * commit in between, so its answer is what each of them would have read (identical reads coalesce, as
 * when a commit has just emptied the cache under load). A read that fails or finds nothing (undefined) is
 * not kept (a cache of lookups that may find nothing has `undefined` in `V`). `get` is synchronous when
 * the token is and the value is kept (SQLite's hits). With tracing on, each `get` is a `cache <name>` span
 * saying `petstore.cache.hit` (false: this caller read the database, in a child span).
 *
 * @example
 * const page = await pages.get(key, () => repository.readPage(query))
 */
export function createFreshCache<V>(name: string, changeToken: ChangeToken | undefined, maxEntries: number) {
  const entries = createBoundedMap<string, V | Promise<V>>(maxEntries)
  let current: unknown

  function fromToken(key: string, token: unknown, load: () => V | Promise<V>): V | Promise<V> {
    if (token !== current) {
      entries.clear()
      current = token
    }
    const kept = entries.get(key)
    if (kept !== undefined) return kept
    const loaded = load()
    if (!(loaded instanceof Promise)) return loaded === undefined ? loaded : entries.set(key, loaded)
    entries.set(key, loaded)
    const settle = (value: V | undefined) => {
      if (entries.get(key) !== loaded) return
      if (value === undefined) entries.delete(key)
      else entries.set(key, value)
    }
    loaded.then(settle, () => settle(undefined))
    return loaded
  }

  function lookup(key: string, load: () => V | Promise<V>): V | Promise<V> {
    if (!changeToken) return load()
    const token = changeToken()
    return token instanceof Promise
      ? token.then((read) => fromToken(key, read, load))
      : fromToken(key, token, load)
  }

  const spanName = `cache ${name}`
  /** The lookup in a `cache <name>` span (when the request's trace records), synchronous when it is. */
  function tracedLookup(key: string, load: () => V | Promise<V>): V | Promise<V> {
    return inSpanMaybeAsync(spanName, (span) => {
      if (!span) return lookup(key, load)
      span.setAttribute('petstore.cache.hit', true)
      return lookup(key, () => {
        span.setAttribute('petstore.cache.hit', false)
        return load()
      })
    })
  }

  return {
    /** The value kept under the current token, else `load()`'s (kept, and shared while in flight). */
    get(key: string, load: () => V | Promise<V>): V | Promise<V> {
      return tracingEnabled() ? tracedLookup(key, load) : lookup(key, load)
    },
  }
}

export type FreshCache<V> = ReturnType<typeof createFreshCache<V>>
