import type { Db } from './database.js'
import type { DbHandle } from './handle.js'

interface Pending<Item, Result> {
  item: Item
  resolve: (result: Result) => void
  reject: (error: unknown) => void
}

/**
 * Group commit: writes that arrive in the same turn of the event loop run in one transaction, so
 * they share one fsync instead of paying one each. Every caller still resolves only after the commit
 * that holds its write, and if that transaction fails, every write in it fails (none is half-done).
 *
 * @example const insert = createGroupCommit(handle, (trx, pet: NewPet) => insertPet(trx, pet, now))
 */
export function createGroupCommit<Item, Result>(
  handle: Pick<DbHandle, 'write'>,
  write: (trx: Db, item: Item) => Promise<Result>,
) {
  let queue: Pending<Item, Result>[] = []

  async function flush(): Promise<void> {
    const batch = queue
    queue = []
    try {
      const results = await handle.write(async (trx) => {
        const written: Result[] = []
        for (const pending of batch) written.push(await write(trx, pending.item))
        return written
      })
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
