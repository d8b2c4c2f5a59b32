import { expect, test } from 'vitest'
import { createFreshCache } from './fresh-cache.js'

function tokenSource() {
  let version = 1
  return { token: () => version, commit: () => version++ }
}

test('a value is served while the token it was stored under is current, and never after a commit', () => {
  const db = tokenSource()
  const cache = createFreshCache<string>(db.token, 10)
  const first = cache.lookup('page')
  expect(first.value).toBeUndefined()
  cache.store('page', first.token, 'rows of version 1')
  expect(cache.lookup('page').value).toBe('rows of version 1')
  db.commit()
  expect(cache.lookup('page').value).toBeUndefined()
})

test('a value read before a commit is not kept under the token that followed it', () => {
  const db = tokenSource()
  const cache = createFreshCache<string>(db.token, 10)
  const { token } = cache.lookup('page')
  db.commit()
  cache.lookup('other')
  expect(cache.store('page', token, 'read before the commit')).toBe('read before the commit')
  expect(cache.lookup('page').value).toBeUndefined()
})

test('without a change token nothing is kept', () => {
  const cache = createFreshCache<string>(undefined, 10)
  const { token } = cache.lookup('page')
  cache.store('page', token, 'rows')
  expect(cache.lookup('page').value).toBeUndefined()
})

test('past its bound the cache starts over instead of growing', () => {
  const db = tokenSource()
  const cache = createFreshCache<number>(db.token, 3)
  for (let i = 0; i < 3; i++) cache.store(`k${i}`, cache.lookup(`k${i}`).token, i)
  expect(cache.lookup('k2').value).toBe(2)
  cache.store('k3', cache.lookup('k3').token, 3)
  expect(cache.lookup('k0').value).toBeUndefined()
  expect(cache.lookup('k3').value).toBe(3)
})
