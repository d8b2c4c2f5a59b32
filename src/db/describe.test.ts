import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../config.js'
import { describeDatabase } from './describe.js'

const describeUrl = (url: string) => describeDatabase(loadConfig({ DATABASE_URL: url }).database)

describe('describeDatabase', () => {
  it('gives a SQLite file by its absolute path', () => {
    expect(describeUrl('sqlite:./data/petstore.sqlite')).toBe(`sqlite:${resolve('data/petstore.sqlite')}`)
    expect(describeUrl('sqlite:/var/lib/petstore.sqlite')).toBe('sqlite:/var/lib/petstore.sqlite')
  })

  it('hides a PostgreSQL password, in the user part and in the query', () => {
    expect(describeUrl('postgres://shop:p%40ss@db:5432/petstore')).toBe(
      'postgres://shop:***@db:5432/petstore',
    )
    expect(describeUrl('postgresql://db/petstore?user=shop&password=secret')).toBe(
      'postgresql://db/petstore?user=shop&password=***',
    )
    expect(describeUrl('postgres://shop@db/petstore')).toBe('postgres://shop@db/petstore')
  })
})
