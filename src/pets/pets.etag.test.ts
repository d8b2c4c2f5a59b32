import { describe, expect, test } from 'vitest'
import { etagOf, ifMatchVersions } from './pets.etag.js'

describe('ifMatchVersions: RFC 9110 strong comparison', () => {
  test('the current tag, or any in a list, names its version', () => {
    const tag = etagOf({ pet: { id: 20, name: 'x', categoryId: 1 }, version: 5 })
    expect(ifMatchVersions(tag, 20)).toEqual([5])
    expect(ifMatchVersions(`"nope", ${tag}, "20-7"`, 20)).toEqual([5, 7])
    expect(ifMatchVersions('*', 20)).toBeUndefined()
  })

  test.each(['"20-04"', '"20-5-x"', '"020-5"', '"20-5 "', 'W/"20-5"', '"21-5"', '20-5', '"20-"', '"20-0"'])(
    '%s matches no version of pet 20',
    (header) => {
      expect(ifMatchVersions(header, 20)).toEqual([])
    },
  )
})
