import { describe, expect, it } from 'vitest'
import { redactUrl } from './redact-url.js'

describe('redactUrl', () => {
  it.each([
    ['postgres://shop:p%40ss@db:5432/petstore', 'postgres://shop:***@db:5432/petstore'],
    ['postgres://u:1234/x@h/db', 'postgres://u:***@h/db'],
    ['postgres://u:a#b@c@h:5432/db', 'postgres://u:***@h:5432/db'],
    ['rediss://:s3cret@cache:6380', 'rediss://:***@cache:6380'],
    ['postgresql://db/petstore?user=shop&password=secret', 'postgresql://db/petstore?user=shop&password=***'],
  ])('hides the password of %s', (url, shown) => {
    expect(redactUrl(url)).toBe(shown)
  })

  it.each(['postgres://shop@db/petstore', 'sqlite:./data/petstore.sqlite', '8080', 'not a url'])(
    'leaves %s as it is',
    (text) => {
      expect(redactUrl(text)).toBe(text)
    },
  )
})
