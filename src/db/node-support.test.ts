import { describe, expect, it } from 'vitest'
import { sqliteOnNodeWarning } from './node-support.js'

describe('sqliteOnNodeWarning', () => {
  it.each(['20.20.2', '22.23.3', '24.18.1', '26.10.0'])('is silent on Node %s', (version) => {
    expect(sqliteOnNodeWarning(version)).toBeUndefined()
  })

  it.each(['24.19.0', '24.21.0'])('warns on Node %s, naming the versions that work', (version) => {
    expect(sqliteOnNodeWarning(version)).toBe(
      `Node ${version} may abort this process when it frees a SQLite statement (nodejs/node#65446): ` +
        'run the SQLite store on Node 22, 24.18 or 26, or use PostgreSQL',
    )
  })
})
