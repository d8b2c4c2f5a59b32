import { expect, it } from 'vitest'
import {
  LATE_READ_WARN_MS,
  LateOwnershipRead,
  lateReadWarner,
  OWNERSHIP_WINDOW_MS,
  ownedInWindows,
  READ_AHEAD_ATTEMPTS,
} from './ownership-windows.js'

/**
 * The read behind the windows, over attempts kept here: `pending` holds the ids still pending and a's, and
 * `found.url` is what a read finds for each. `owned` says only whether an attempt is still a's.
 */
function harness() {
  const clock = { now: 0 }
  const pending = new Set<number>()
  const reads: number[][] = []
  const found = { url: 'https://one.example/' }
  /** How long the next reads take, in the clock's ms. */
  let takes = 0
  const read = async (ids: number[], owner: string) => {
    reads.push([...ids].sort((a, b) => a - b))
    const { url } = found
    clock.now += takes
    return new Map(ids.filter((id) => owner === 'a' && pending.has(id)).map((id) => [id, { url }]))
  }
  const targetIfOwn = ownedInWindows(read, () => clock.now)
  const owned = (...args: Parameters<typeof targetIfOwn>) => {
    const target = targetIfOwn(...args)
    return target instanceof Promise ? target.then((own) => own !== undefined) : target !== undefined
  }
  const attempt = (id: number, endpointId = 10) => {
    pending.add(id)
    return { id, endpoint: { id: endpointId } }
  }
  const turn = () => new Promise((resolve) => setImmediate(resolve))
  const slowReads = (ms: number) => {
    takes = ms
  }
  return { clock, pending, reads, found, owned, targetIfOwn, attempt, turn, slowReads }
}

it('reads the attempts asked about in a turn and those queued behind them once, then answers from it within its window', async () => {
  const { owned, attempt, reads, clock } = harness()
  const [one, two, three, other] = [attempt(1), attempt(2), attempt(3), attempt(4, 20)]
  expect(await Promise.all([owned(one, 'a', [two, three]), owned(other, 'a')])).toEqual([true, true])
  expect(reads).toEqual([[1, 2, 3, 4]])
  clock.now += OWNERSHIP_WINDOW_MS / 4
  expect(owned(two, 'a', [three])).toBe(true)
  expect(reads).toHaveLength(1)
})

it('reads the queue again ahead past half the window, so the next attempts still start without waiting', async () => {
  const { owned, attempt, reads, clock, turn } = harness()
  const [one, two, three, four] = [attempt(1), attempt(2), attempt(3), attempt(4)]
  await owned(one, 'a', [two, three, four])
  clock.now += OWNERSHIP_WINDOW_MS * 0.6
  expect(owned(two, 'a', [three, four])).toBe(true)
  await turn()
  expect(reads).toEqual([
    [1, 2, 3, 4],
    [3, 4],
  ])
  clock.now += OWNERSHIP_WINDOW_MS * 0.6
  // Past the first read's window, within the second's.
  expect(owned(three, 'a', [four])).toBe(true)
})

it('answers with what its read found, within its window; then with what the read after it found', async () => {
  const { targetIfOwn, attempt, found, clock } = harness()
  const [one, two, three] = [attempt(1), attempt(2), attempt(3)]
  expect(await targetIfOwn(one, 'a', [two, three])).toEqual({ url: 'https://one.example/' })
  // Changed since (a PATCH, which answers only once this read's window is over): still what it found.
  found.url = 'https://two.example/'
  expect(targetIfOwn(two, 'a')).toEqual({ url: 'https://one.example/' })
  clock.now += OWNERSHIP_WINDOW_MS
  expect(await targetIfOwn(three, 'a')).toEqual({ url: 'https://two.example/' })
})

it('reads at most READ_AHEAD_ATTEMPTS queued behind the one asked about', async () => {
  const { owned, attempt, reads } = harness()
  const [first, ...queue] = Array.from({ length: READ_AHEAD_ATTEMPTS + 10 }, (_, index) => attempt(index + 1))
  await owned(first ?? attempt(0), 'a', queue)
  expect(reads[0]).toHaveLength(READ_AHEAD_ATTEMPTS + 1)
})

it('says yes from a read within its window, and no only from a read sent after the question', async () => {
  const { owned, attempt, reads, pending } = harness()
  const [one, two] = [attempt(1), attempt(2)]
  await owned(one, 'a', [two])
  // Ended since (a DELETE, which answers only once this read's window is over): it may still start.
  pending.delete(two.id)
  expect(owned(two, 'a')).toBe(true)
  // Not this instance's when asked, taken again since: the "no" was not kept.
  const three = { id: 3, endpoint: { id: 10 } }
  expect(await owned(three, 'a')).toBe(false)
  attempt(3)
  expect(await owned(three, 'a')).toBe(true)
  expect(await owned(one, 'b')).toBe(false)
  expect(reads).toHaveLength(4)
})

it('reads again once the window has passed, and rejects a read that answers after its window', async () => {
  const { owned, attempt, reads, clock, pending, slowReads } = harness()
  const [one, two] = [attempt(1), attempt(2)]
  await owned(one, 'a', [two])
  clock.now += OWNERSHIP_WINDOW_MS
  pending.delete(two.id)
  expect(await owned(two, 'a')).toBe(false)
  expect(reads).toHaveLength(2)
  const three = attempt(3)
  slowReads(OWNERSHIP_WINDOW_MS)
  await expect(owned(three, 'a')).rejects.toBeInstanceOf(LateOwnershipRead)
})

it('says a late read at most once every LATE_READ_WARN_MS, and rethrows every failure', () => {
  const clock = { now: 0 }
  const warnings: object[] = []
  const warnIfLate = lateReadWarner({ warn: (fields) => warnings.push(fields) }, () => clock.now)
  const late = new LateOwnershipRead(140.4)
  expect(() => warnIfLate(late)).toThrow(late)
  expect(warnings).toEqual([{ tookMs: 140, windowMs: OWNERSHIP_WINDOW_MS }])
  clock.now += LATE_READ_WARN_MS - 1
  expect(() => warnIfLate(late)).toThrow(late)
  expect(warnings).toHaveLength(1)
  const broken = new Error('connection lost')
  clock.now += 1
  expect(() => warnIfLate(broken)).toThrow(broken)
  expect(warnings).toHaveLength(1)
  expect(() => warnIfLate(late)).toThrow(late)
  expect(warnings).toHaveLength(2)
})
