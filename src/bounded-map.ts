/**
 * The one bounded cache shape: a Map that holds at most `maxEntries`, dropping the oldest entry to make
 * room, so it cannot grow with keys a client invents and a full cache keeps most of what it had.
 *
 * @example const statements = createBoundedMap<string, Statement>(1_000)
 */
export function createBoundedMap<K, V>(maxEntries: number) {
  const entries = new Map<K, V>()
  return {
    get: (key: K): V | undefined => entries.get(key),
    set(key: K, value: V): V {
      if (entries.size >= maxEntries && !entries.has(key)) {
        entries.delete(entries.keys().next().value as K)
      }
      entries.set(key, value)
      return value
    },
    delete: (key: K): boolean => entries.delete(key),
    clear: () => entries.clear(),
    get size() {
      return entries.size
    },
  }
}
