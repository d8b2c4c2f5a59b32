import { isStorageWriteFailure } from './connect.js'
import type { Db } from './database.js'
import type { DbHandle } from './handle.js'

/**
 * A probe row larger than a page: it needs pages the file may not have, as a new pet would. (A smaller
 * one could fit in a page already there and report a full database as writable.)
 */
const PROBE_FILLER = 'x'.repeat(12 * 1024)

/**
 * Whether the storage takes writes (CONTRACT §12). Every write goes through the returned handle; once the
 * storage itself refuses one (a full disk, an I/O error, a read-only file), `check` fails until a write
 * succeeds again: a request's, or the probe that `check` writes and deletes in one transaction.
 */
export function trackWriteHealth(handle: DbHandle) {
  let failure: unknown
  const write = async <T>(work: (trx: Db) => Promise<T>): Promise<T> => {
    try {
      const result = await handle.write(work)
      failure = undefined
      return result
    } catch (error) {
      if (isStorageWriteFailure(error)) failure = error
      throw error
    }
  }
  return {
    handle: { ...handle, write } satisfies DbHandle,
    /** Resolves while writes succeed; after a refused write, only once a probe write succeeds. */
    async check(): Promise<void> {
      if (failure === undefined) return
      await write(async (trx) => {
        await trx.insertInto('storage_probe').values({ id: 1, filler: PROBE_FILLER }).execute()
        await trx.deleteFrom('storage_probe').execute()
      })
    },
  }
}
