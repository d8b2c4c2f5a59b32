import type { PreparedRead } from '../db/handle.js'
import { batchByTurn } from '../db/turn-batch.js'

/**
 * How long one PostgreSQL read that attempts are still pending and a dispatcher's lets them start without
 * another. A DELETE or a disabling PATCH answers only this long after it commits (`endingAttempts`,
 * endpoints.service.ts): a read sent before that commit lets its attempts start until at most this long
 * after it was sent, which is before the answer, so none of them starts after it.
 */
export const OWNERSHIP_WINDOW_MS = 100

/** What the asker of `isStillOwn` knows of an attempt: its id and its endpoint. */
export type OwnedAsk = { id: number; endpoint: { id: number } }

/** Attempts queued behind the one asked about that a read confirms with it, at most. */
export const READ_AHEAD_ATTEMPTS = 256

/**
 * PostgreSQL's ownership reads, a round trip for many attempts instead of one before each. A read asks
 * about the attempt to start and up to READ_AHEAD_ATTEMPTS queued behind it (`queued`, in the order the
 * lane starts them); each it finds still pending and `owner`'s may start without another read for
 * OWNERSHIP_WINDOW_MS from when it was sent, and one asked about past half its window has its endpoint's
 * queue read again ahead, so a busy lane does not wait. Any other answer comes from a read sent after the
 * question (a "no" is never answered from an older read: an attempt given back may be taken again). A read
 * that answers after its window rejects: the lane puts the attempt back and asks again. The reads asked
 * for in one turn of the event loop go together (`batchByTurn`), one round trip.
 */
export function ownedInWindows(
  ownAmong: PreparedRead<[ids: number[], owner: string], { id: number }>,
  now = () => performance.now(),
) {
  const byOwner = new Map<string, OwnerReads>()

  function readsOf(owner: string): OwnerReads {
    let state = byOwner.get(owner)
    if (state) return state
    const confirmed = new Map<number, number>()
    const wanted = new Set<number>()
    const read = batchByTurn(async (_endpointIds: number[]) => {
      const ids = [...wanted]
      wanted.clear()
      const sentAt = now()
      const own = new Set((await ownAmong(ids, owner)).map((row) => Number(row.id)))
      if (confirmed.size > KEPT_CONFIRMATIONS)
        for (const [id, at] of confirmed) if (now() - at >= OWNERSHIP_WINDOW_MS) confirmed.delete(id)
      for (const id of own) confirmed.set(id, Math.max(confirmed.get(id) ?? sentAt, sentAt))
      return new Map([[0, { sentAt, own }]])
    })
    state = { confirmed, wanted, read, ahead: new Set() }
    byOwner.set(owner, state)
    return state
  }

  /** A read of `ids` (with the next turn's others), answering once it is in. */
  function readOf(state: OwnerReads, ids: readonly number[]): Promise<WindowRead | undefined> {
    for (const id of ids) state.wanted.add(id)
    return state.read(0)
  }

  return (asked: OwnedAsk, owner: string, queued: readonly OwnedAsk[] = []): boolean | Promise<boolean> => {
    const state = readsOf(owner)
    const behind = queued.slice(0, READ_AHEAD_ATTEMPTS).map((attempt) => attempt.id)
    const at = state.confirmed.get(asked.id)
    const age = at === undefined ? Number.POSITIVE_INFINITY : now() - at
    if (age < OWNERSHIP_WINDOW_MS) {
      state.confirmed.delete(asked.id)
      const endpoint = asked.endpoint.id
      if (age > OWNERSHIP_WINDOW_MS / 2 && !state.ahead.has(endpoint) && behind.length > 0) {
        state.ahead.add(endpoint)
        readOf(state, behind)
          .catch(() => {})
          .finally(() => state.ahead.delete(endpoint))
      }
      return true
    }
    return readOf(state, [asked.id, ...behind]).then((read) => {
      if (read === undefined || now() - read.sentAt >= OWNERSHIP_WINDOW_MS)
        throw new Error('the ownership read answered after its window')
      if (!read.own.has(asked.id)) return false
      state.confirmed.delete(asked.id)
      return true
    })
  }
}

/** One read: when it was sent, and which of the attempts it asked about were pending and the owner's. */
type WindowRead = { sentAt: number; own: Set<number> }
type OwnerReads = {
  /** Attempts found pending and the owner's, by when the read that found them was sent. */
  confirmed: Map<number, number>
  /** Attempts to ask about in the next read. */
  wanted: Set<number>
  /** The next read (one a turn, `batchByTurn` with a single key). */
  read: (key: number) => Promise<WindowRead | undefined>
  /** Endpoints whose queue is being read again ahead. */
  ahead: Set<number>
}
/** Confirmations kept before those past their window are dropped. */
const KEPT_CONFIRMATIONS = 4_096
