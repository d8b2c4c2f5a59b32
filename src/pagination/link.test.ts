import { expect, test } from 'vitest'
import { decodeCursor } from './cursor.js'
import { keysetPage } from './keyset.js'
import { nextPageLink } from './link.js'

test('one row more than the limit makes a next cursor naming the last item of the page', () => {
  const rows = [{ id: 3 }, { id: 5 }, { id: 8 }]
  const page = keysetPage(rows, 2)
  expect(page.items).toEqual([{ id: 3 }, { id: 5 }])
  expect(decodeCursor(page.nextCursor ?? '')).toBe(5)
  expect(keysetPage(rows, 3)).toEqual({ items: rows })
})

test('the Link names the listing, its filters as given, and the cursor', () => {
  expect(nextPageLink('https://api.example/v1', '/pets', { limit: 20, status: 'sold' }, 'abc')).toBe(
    '<https://api.example/v1/pets?limit=20&status=sold&cursor=abc>; rel="next"',
  )
  expect(nextPageLink('http://h/v1', '/store/orders', { limit: 5, status: undefined }, 'x')).toBe(
    '<http://h/v1/store/orders?limit=5&cursor=x>; rel="next"',
  )
})
