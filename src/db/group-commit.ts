import type { Span } from '@opentelemetry/api'
import { inSpan, sharedBy } from '../tracing/tracing.js'
import type { Db } from './database.js'
import type { DbHandle } from './handle.js'

interface Pending<Item, Result> {
  item: Item
  resolve: (result: Result) => void
  reject: (error: unknown) => void
  /** The caller's `group commit` span (tracing on): it learns the size of the batch it joined. */
  span: Span | undefined
}

/**
 * Group commit: writes that arrive in the same turn of the event loop run in one transaction, so
 * they share one fsync instead of paying one each, and `writeAll` gets them together (one multi-row
 * statement instead of a round trip each, on PostgreSQL). It returns one result per item, in order.
 * Every caller still resolves only after the commit that holds its write, and if that transaction
 * fails, every write in it fails (none is half-done). With tracing on each caller waits in a `group commit`
 * span that says how many writes shared the transaction; the transaction's statements are spans under the
 * first traced caller's, which the other traced callers' link to (`sharedBy`).
 *
 * @example const insert = createGroupCommit(handle, (trx, pets: NewPet[]) => insertPets(trx, pets, now))
 */
export function createGroupCommit<Item, Result>(
  handle: Pick<DbHandle, 'write'>,
  writeAll: (trx: Db, items: Item[]) => Promise<Result[]>,
) {
  let queue: Pending<Item, Result>[] = []

  async function flush(): Promise<void> {
    const batch = queue
    queue = []
    try {
      const results = await sharedBy(
        batch.map((pending) => pending.span),
        () =>
          handle.write((trx) =>
            writeAll(
              trx,
              batch.map((pending) => pending.item),
            ),
          ),
      )
      for (const [index, pending] of batch.entries()) {
        pending.span?.setAttribute('petstore.group_commit.size', batch.length)
        pending.resolve(results[index] as Result)
      }
    } catch (error) {
      for (const pending of batch) pending.reject(error)
    }
  }

  return (item: Item): Promise<Result> =>
    inSpan('group commit', {}, (span) => {
      return new Promise<Result>((resolve, reject) => {
        if (queue.length === 0) setImmediate(flush)
        queue.push({ item, resolve, reject, span })
      })
    })
}
