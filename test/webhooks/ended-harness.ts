import type { KyselyPlugin } from 'kysely'
import type { Db } from '../../src/db/database.js'
import type { DbHandle } from '../../src/db/handle.js'
import type { AttemptOutcome } from '../../src/webhooks/attempts.repository.js'
import type { Ended } from '../../src/webhooks/lane.js'
import { endpointRow, eventRow, insertEndpointRows } from './harness.js'

/** What one attempt a test has end came of: an HTTP answer, a 2xx or else a failure. */
export const answered = (httpStatus: number, startedAt: number): AttemptOutcome => ({
  startedAt,
  httpStatus,
  error: httpStatus < 300 ? null : `HTTP ${httpStatus}: down`,
  durationMs: 1,
})

/** `count` enabled endpoints of `account`, written straight to the table; their ids, ascending. */
export async function endpointsOf(db: Db, account: number, count: number, at: number): Promise<number[]> {
  await insertEndpointRows(
    db,
    Array.from({ length: count }, (_, n) => endpointRow(account, `https://e${n}.example/`, '["*"]', at)),
  )
  const rows = await db.selectFrom('webhook_endpoints').select('id').orderBy('id').execute()
  return rows.map((row) => row.id)
}

/**
 * First attempts of one event, held by `owner` (taken, not yet written down), one for each of `answers`
 * in order, to its endpoint, with that outcome: the ended attempts a dispatcher's lanes hand to its step.
 */
export async function endedAttempts(
  db: Db,
  owner: string,
  answers: readonly { endpointId: number; outcome: AttemptOutcome }[],
  at: number,
): Promise<Ended[]> {
  const event = await db
    .insertInto('events')
    .values({ ...eventRow(at), fanned_out: 1 })
    .returningAll()
    .executeTakeFirstOrThrow()
  const ended: Ended[] = []
  for (let from = 0; from < answers.length; from += 400) {
    const part = answers.slice(from, from + 400)
    const rows = part.map(({ endpointId }) => ({
      event_seq: event.seq,
      endpoint_id: endpointId,
      attempt: 1,
      status: 'pending',
      due_at: at,
      at,
      lease_token: owner,
    }))
    const ids = await db.insertInto('webhook_attempts').values(rows).returning('id').execute()
    part.forEach(({ endpointId, outcome }, index) => {
      const endpoint = { id: endpointId }
      const claimed = { id: Number(ids[index]?.id), attempt: 1, redelivery: false, endpoint, event }
      ended.push({ claimed, outcome })
    })
  }
  return ended
}

/**
 * `handle`, counting the statements its writes send through their transaction (each a round trip on
 * PostgreSQL); on SQLite the compiled statements run in place on the connection (`prepareWrite`), which
 * cost no round trip, are not among them.
 */
export function countingStatements(handle: DbHandle) {
  let count = 0
  const counter: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      count++
      return args.result
    },
  }
  const counted: DbHandle = {
    ...handle,
    write: (work) => handle.write((trx) => work(trx.withPlugin(counter))),
  }
  return { handle: counted, statements: () => count }
}
