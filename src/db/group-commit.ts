import type { Db } from './database.js'
import type { DbHandle } from './handle.js'

interface Pending<Item, Result> {
  item: Item
  resolve: (result: Result) => void
  reject: (error: unknown) => void
}

/**
 * Group commit: writes that arrive in the same turn of the event loop run in one transaction, so
 * they share one fsync instead of paying one each, and `writeAll` gets them together (one multi-row
 * statement instead of a round trip each, on PostgreSQL). It returns one result per item, in order.
 * Every caller still resolves only after the commit that holds its write, and if that transaction
 * fails, every write in it fails (none is half-done).
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
      const results = await handle.write((trx) =>
        writeAll(
          trx,
          batch.map((pending) => pending.item),
        ),
      )
      for (const [index, pending] of batch.entries()) pending.resolve(results[index] as Result)
    } catch (error) {
      for (const pending of batch) pending.reject(error)
    }
  }

  return (item: Item): Promise<Result> =>
    new Promise<Result>((resolve, reject) => {
      if (queue.length === 0) setImmediate(flush)
      queue.push({ item, resolve, reject })
    })
}
