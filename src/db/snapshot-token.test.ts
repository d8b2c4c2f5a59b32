import { setImmediate as nextTurn } from 'node:timers/promises'
import { expect, test } from 'vitest'
import { createSnapshotToken } from './snapshot-token.js'

test('the callers of one turn share one query, sent after the last of them asked', async () => {
  const sent: number[] = []
  let asked = 0
  const token = createSnapshotToken(async () => {
    sent.push(asked)
    return `snapshot ${sent.length}`
  })
  const first = [token(), token(), token()]
  asked = 3
  expect(sent).toEqual([])
  expect(await Promise.all(first)).toEqual(['snapshot 1', 'snapshot 1', 'snapshot 1'])
  expect(sent).toEqual([3])
})

test('a caller that asks once the query was sent waits for a query of its own', async () => {
  let release: (() => void) | undefined
  let queries = 0
  const token = createSnapshotToken(
    () =>
      new Promise<string>((resolve) => {
        queries++
        release = () => resolve(`snapshot ${queries}`)
      }),
  )
  const early = token()
  await nextTurn()
  // The first query is in flight: a new caller must not share it (it may have run before this call).
  const late = token()
  expect(queries).toBe(1)
  release?.()
  expect(await early).toBe('snapshot 1')
  await nextTurn()
  release?.()
  expect(await late).toBe('snapshot 2')
})

test('a failed query fails its callers and the next turn tries again', async () => {
  let fail = true
  const token = createSnapshotToken(async () => {
    if (fail) throw new Error('connection refused')
    return 'snapshot'
  })
  await expect(token()).rejects.toThrow('connection refused')
  fail = false
  await expect(token()).resolves.toBe('snapshot')
})
