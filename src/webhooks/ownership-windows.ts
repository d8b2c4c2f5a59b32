import { batchByTurn } from '../db/turn-batch.js'

/**
 * How long one PostgreSQL read that attempts are still pending and a dispatcher's lets them start without
 * another, with the endpoint's URL and secrets it found. A DELETE, a disabling PATCH, an operator's
 * disable, a PATCH of the URL and a rotation answer only this long (and a little more) after they commit
 * (`outwaitReadWindows`, endpoints.service.ts): a read sent before that commit lets its attempts start
 * until at most this long after it was sent, which is before the answer, so none of them starts after it,
 * nor with what the change replaced.
 */
export const OWNERSHIP_WINDOW_MS = 100

/** What the asker of `targetIfOwn` knows of an attempt: its id and its endpoint. */
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
 * OWNERSHIP_WINDOW_MS from when it was sent, with what that read found for it (`ownAmong` answers the
 * attempts it found, each with its endpoint's target), and one asked about past half its window has the
 * queue behind it read again ahead, so a busy lane does not wait. Any other answer comes from a read sent
 * after the question (a "no" is never answered from an older read: an attempt given back may be taken
 * again). A read that answers after its window rejects with LateOwnershipRead. The attempts asked about in
 * one turn of the event loop are read together (`batchByTurn`), one round trip.
 */
export function ownedInWindows<T>(
  ownAmong: (ids: number[], owner: string) => Promise<ReadonlyMap<number, T>>,
  now = () => performance.now(),
) {
  const byOwner = new Map<string, OwnerReads<T>>()

  function readsOf(owner: string): OwnerReads<T> {
    let state = byOwner.get(owner)
    if (state) return state
    const confirmed = new Map<number, Found<T>>()
    let prunedAt = Number.NEGATIVE_INFINITY
    const read = batchByTurn(async (ids: number[]) => {
      const sentAt = now()
      const own = await ownAmong(ids, owner)
      // Past their window once there are many, at most once a window (many busy lanes keep many fresh).
      if (confirmed.size > KEPT_CONFIRMATIONS && sentAt - prunedAt >= OWNERSHIP_WINDOW_MS) {
        prunedAt = sentAt
        for (const [id, { at }] of confirmed) if (sentAt - at >= OWNERSHIP_WINDOW_MS) confirmed.delete(id)
      }
      // Reads may answer out of order: what the one sent last found is kept.
      for (const [id, value] of own) {
        if ((confirmed.get(id)?.at ?? sentAt) <= sentAt) confirmed.set(id, { at: sentAt, value })
      }
      return new Map(ids.map((id) => [id, { sentAt, value: own.get(id) }]))
    })
    state = { confirmed, read, ahead: new Set() }
    byOwner.set(owner, state)
    return state
  }

  /** The queue behind an attempt read again ahead, once at a time per endpoint. */
  function readAhead(state: OwnerReads<T>, endpointId: number, behind: readonly number[]): void {
    if (state.ahead.has(endpointId) || behind.length === 0) return
    state.ahead.add(endpointId)
    Promise.all(behind.map((id) => state.read(id)))
      .catch(() => {})
      .finally(() => state.ahead.delete(endpointId))
  }

  return (
    asked: OwnedAsk,
    owner: string,
    queued: readonly OwnedAsk[] = [],
  ): T | undefined | Promise<T | undefined> => {
    const state = readsOf(owner)
    const behind = queued.slice(0, READ_AHEAD_ATTEMPTS).map((attempt) => attempt.id)
    const found = state.confirmed.get(asked.id)
    const age = found === undefined ? Number.POSITIVE_INFINITY : now() - found.at
    if (found && age < OWNERSHIP_WINDOW_MS) {
      state.confirmed.delete(asked.id)
      if (age > OWNERSHIP_WINDOW_MS / 2) readAhead(state, asked.endpoint.id, behind)
      return found.value
    }
    for (const id of behind) state.read(id).catch(() => {})
    return state.read(asked.id).then((answer) => {
      if (answer === undefined) throw new Error('the ownership read did not answer for the attempt')
      const took = now() - answer.sentAt
      if (took >= OWNERSHIP_WINDOW_MS) throw new LateOwnershipRead(took)
      if (answer.value !== undefined) state.confirmed.delete(asked.id)
      return answer.value
    })
  }
}

/** An attempt a read found pending and the owner's: when that read was sent, and what it found. */
type Found<T> = { at: number; value: T }

type OwnerReads<T> = {
  /** Attempts found pending and the owner's, by id. */
  confirmed: Map<number, Found<T>>
  /** The next read: every attempt asked about in this turn, one round trip once the turn ends. */
  read: (id: number) => Promise<{ sentAt: number; value: T | undefined } | undefined>
  /** Endpoints whose queue is being read again ahead. */
  ahead: Set<number>
}
/** Confirmations kept before those past their window are dropped. */
const KEPT_CONFIRMATIONS = 4_096
