import { expect, test } from 'vitest'
import { createFreshCache } from './fresh-cache.js'

function tokenSource() {
  let version = 1
  return { token: () => version, commit: () => version++ }
}

/** A load that counts its calls and answers `value`. */
function loader<V>(value: V) {
  const load = () => {
    load.calls++
    return value
  }
  load.calls = 0
  return load
}

test('a value is served while the token it was read under is current, and never after a commit', () => {
  const db = tokenSource()
  const cache = createFreshCache<string>('test', db.token, 10)
  const load = loader('rows of version 1')
  expect(cache.get('page', load)).toBe('rows of version 1')
  expect(cache.get('page', load)).toBe('rows of version 1')
  expect(load.calls).toBe(1)
  db.commit()
  expect(cache.get('page', loader('rows of version 2'))).toBe('rows of version 2')
})

test('a read in flight when a commit lands is not kept', async () => {
  const db = tokenSource()
  const cache = createFreshCache<string>('test', db.token, 10)
  let finish: (value: string) => void = () => {}
  const inFlight = cache.get('page', () => new Promise<string>((resolve) => (finish = resolve)))
  db.commit()
  cache.get('other', loader('x'))
  finish('read before the commit')
  expect(await inFlight).toBe('read before the commit')
  expect(cache.get('page', loader('read after the commit'))).toBe('read after the commit')
})

test('callers with the same token share a read in flight; a failed read is not kept', async () => {
  const db = tokenSource()
  const cache = createFreshCache<string>('test', db.token, 10)
  let calls = 0
  const failing = () => {
    calls++
    return Promise.reject(new Error('unavailable'))
  }
  const [first, second] = [cache.get('page', failing), cache.get('page', failing)]
  await expect(first).rejects.toThrow('unavailable')
  await expect(second).rejects.toThrow('unavailable')
  expect(calls).toBe(1)
  expect(await cache.get('page', async () => 'read again')).toBe('read again')
})

test('nothing found (undefined) is not kept, and without a change token nothing is', () => {
  const db = tokenSource()
  const cache = createFreshCache<string | undefined>('test', db.token, 10)
  const missing = loader<string | undefined>(undefined)
  cache.get('unknown', missing)
  cache.get('unknown', missing)
  expect(missing.calls).toBe(2)
  const uncached = createFreshCache<string>('test', undefined, 10)
  const load = loader('rows')
  uncached.get('page', load)
  uncached.get('page', load)
  expect(load.calls).toBe(2)
})

test('past its bound the cache drops its oldest entries instead of growing', () => {
  const db = tokenSource()
  const cache = createFreshCache<number>('test', db.token, 3)
  for (let i = 0; i < 4; i++) cache.get(`k${i}`, loader(i))
  const k0 = loader(-1)
  expect(cache.get('k3', loader(-1))).toBe(3)
  expect(cache.get('k0', k0)).toBe(-1)
  expect(k0.calls).toBe(1)
})

test("an asynchronous token (PostgreSQL's) is awaited: a value read under one is served until it moves", async () => {
  let version = 1
  const cache = createFreshCache<string>('test', async () => version, 10)
  const first = cache.get('page', loader('rows of version 1'))
  expect(first).toBeInstanceOf(Promise)
  expect(await first).toBe('rows of version 1')
  expect(await cache.get('page', loader('not read'))).toBe('rows of version 1')
  version++
  expect(await cache.get('page', loader('rows of version 2'))).toBe('rows of version 2')
})
