import type { PreparedRead } from '../db/handle.js'
import { batchByTurn } from '../db/turn-batch.js'

/**
 * How long one PostgreSQL read that attempts are still pending and a dispatcher's lets them start without
 * another. A DELETE, a disabling PATCH or an operator's disable answers only this long (and a little
 * more) after it commits (`endingAttempts`, endpoints.service.ts): a read sent before that commit lets its
 * attempts start until at most this long after it was sent, which is before the answer, so none of them
 * starts after it.
 */
export const OWNERSHIP_WINDOW_MS = 100

/** What the asker of `isStillOwn` knows of an attempt: its id and its endpoint. */
export type OwnedAsk = { id: number; endpoint: { id: number } }

/** Attempts queued behind the one asked about that a read confirms with it, at most. */
export const READ_AHEAD_ATTEMPTS = 256

/** Thrown when a read's answer comes after its window: the lane puts the attempt back and asks again. */
export class LateOwnershipRead extends Error {
  constructor(readonly tookMs: number) {
    super(
      `the ownership read answered after ${Math.round(tookMs)} ms, past its ${OWNERSHIP_WINDOW_MS} ms window`,
    )
  }
}

/** How often, at most, a dispatcher says its ownership reads answer too late. */
export const LATE_READ_WARN_MS = 10_000

/**
 * What a dispatcher does with a failed ownership read: one that answered after its window (a database this
 * far away, or this busy, delays every attempt) is said on `logger`, at most once every LATE_READ_WARN_MS;
 * every failure is rethrown (the lane asks again).
 */
export function lateReadWarner(
  logger: { warn(fields: object, message: string): void },
  now = () => performance.now(),
): (error: unknown) => never {
  let warnedAt = Number.NEGATIVE_INFINITY
  return (error) => {
    const at = now()
    if (error instanceof LateOwnershipRead && at - warnedAt >= LATE_READ_WARN_MS) {
      warnedAt = at
      logger.warn(
        { tookMs: Math.round(error.tookMs), windowMs: OWNERSHIP_WINDOW_MS },
        'webhook ownership read answered past its window: attempts wait for a faster one',
      )
    }
    throw error
  }
}

/**
 * PostgreSQL's ownership reads, a round trip for many attempts instead of one before each. A read asks
 * about the attempt to start and up to READ_AHEAD_ATTEMPTS queued behind it (`queued`, in the order the
 * lane starts them); each it finds still pending and `owner`'s may start without another read for
 * OWNERSHIP_WINDOW_MS from when it was sent, and one asked about past half its window has the queue behind
 * it read again ahead, so a busy lane does not wait. Any other answer comes from a read sent after the
 * question (a "no" is never answered from an older read: an attempt given back may be taken again). A read
 * that answers after its window rejects with LateOwnershipRead. The attempts asked about in one turn of
 * the event loop are read together (`batchByTurn`), one round trip.
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
    let prunedAt = Number.NEGATIVE_INFINITY
    const read = batchByTurn(async (ids: number[]) => {
      const sentAt = now()
      const own = new Set((await ownAmong(ids, owner)).map((row) => Number(row.id)))
      // Past their window once there are many, at most once a window (many busy lanes keep many fresh).
      if (confirmed.size > KEPT_CONFIRMATIONS && sentAt - prunedAt >= OWNERSHIP_WINDOW_MS) {
        prunedAt = sentAt
        for (const [id, at] of confirmed) if (sentAt - at >= OWNERSHIP_WINDOW_MS) confirmed.delete(id)
      }
      for (const id of own) confirmed.set(id, Math.max(confirmed.get(id) ?? sentAt, sentAt))
      return new Map(ids.map((id) => [id, { sentAt, own: own.has(id) }]))
    })
    state = { confirmed, read, ahead: new Set() }
    byOwner.set(owner, state)
    return state
  }

  /** The queue behind an attempt read again ahead, once at a time per endpoint. */
  function readAhead(state: OwnerReads, endpointId: number, behind: readonly number[]): void {
    if (state.ahead.has(endpointId) || behind.length === 0) return
    state.ahead.add(endpointId)
    Promise.all(behind.map((id) => state.read(id)))
      .catch(() => {})
      .finally(() => state.ahead.delete(endpointId))
  }

  return (asked: OwnedAsk, owner: string, queued: readonly OwnedAsk[] = []): boolean | Promise<boolean> => {
    const state = readsOf(owner)
    const behind = queued.slice(0, READ_AHEAD_ATTEMPTS).map((attempt) => attempt.id)
    const at = state.confirmed.get(asked.id)
    const age = at === undefined ? Number.POSITIVE_INFINITY : now() - at
    if (age < OWNERSHIP_WINDOW_MS) {
      state.confirmed.delete(asked.id)
      if (age > OWNERSHIP_WINDOW_MS / 2) readAhead(state, asked.endpoint.id, behind)
      return true
    }
    for (const id of behind) state.read(id).catch(() => {})
    return state.read(asked.id).then((answer) => {
      if (answer === undefined) throw new Error('the ownership read did not answer for the attempt')
      const took = now() - answer.sentAt
      if (took >= OWNERSHIP_WINDOW_MS) throw new LateOwnershipRead(took)
      if (answer.own) state.confirmed.delete(asked.id)
      return answer.own
    })
  }
}

type OwnerReads = {
  /** Attempts found pending and the owner's, by when the read that found them was sent. */
  confirmed: Map<number, number>
  /** The next read: every attempt asked about in this turn, one round trip once the turn ends. */
  read: (id: number) => Promise<{ sentAt: number; own: boolean } | undefined>
  /** Endpoints whose queue is being read again ahead. */
  ahead: Set<number>
}
/** Confirmations kept before those past their window are dropped. */
const KEPT_CONFIRMATIONS = 4_096
