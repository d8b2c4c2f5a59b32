import { expect, it } from 'vitest'
import type { ClaimedAttempt } from './attempts.repository.js'
import { createHangUps } from './hang-ups.js'

const attempt = (id: number) => ({ id }) as ClaimedAttempt
const ids = (attempts: readonly ClaimedAttempt[]) => attempts.map((claimed) => claimed.id)

it('a hang-up aborts the signal of the attempts in flight and gives later ones a new one', () => {
  const hangUps = createHangUps(4)
  const before = hangUps.signal
  hangUps.hangUp()
  expect(before.aborted).toBe(true)
  expect(hangUps.signal.aborted).toBe(false)
  expect(hangUps.stopped).toBe(false)
})

it('abortAll aborts the last signal and stops: no new one', () => {
  const hangUps = createHangUps(4)
  hangUps.abortAll()
  expect(hangUps.signal.aborted).toBe(true)
  expect(hangUps.stopped).toBe(true)
})

it('attempts hung up on are taken once, in order; a failed step puts its own back ahead of later ones', () => {
  const hangUps = createHangUps(4)
  hangUps.add(attempt(1))
  hangUps.add(attempt(2))
  expect(hangUps.count).toBe(2)
  const taken = hangUps.take()
  expect(ids(taken)).toEqual([1, 2])
  expect(hangUps.count).toBe(0)
  hangUps.add(attempt(3))
  hangUps.putBack(taken)
  expect(ids(hangUps.take())).toEqual([1, 2, 3])
  expect(hangUps.take()).toEqual([])
})
