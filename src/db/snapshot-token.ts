import { batchByTurn } from './turn-batch.js'

/**
 * PostgreSQL's change token: the text of `pg_current_snapshot()` (the oldest running transaction, the next
 * id to assign, the ids running in between). It stays the same exactly as long as no transaction that
 * wrote anything ends: a commit (or rollback) takes its id out of the running list or moves the next id,
 * anywhere in the cluster, whoever sent it. Two equal snapshots therefore see the same committed data, so
 * a page read after the first is still exactly what a read at the second would return.
 *
 * One query serves every caller of a turn of the event loop, sent after all of them asked (turn-batch.ts):
 * a commit acknowledged before a request was sent is in the snapshot that request waits for.
 */
export const SNAPSHOT_SQL = 'select pg_current_snapshot()::text as snapshot'

export function createSnapshotToken(readSnapshot: () => Promise<string>): () => Promise<string> {
  const batch = batchByTurn(async () => new Map([['snapshot', await readSnapshot()]]))
  return async () => (await batch('snapshot')) ?? ''
}
