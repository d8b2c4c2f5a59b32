import type { Logger } from 'pino'
import { createFreshCache } from '../db/fresh-cache.js'
import type { DbHandle } from '../db/handle.js'
import { createInventoryRepository } from './inventory.repository.js'
import type { Inventory } from './orders.schemas.js'

/** How often each instance looks whether the counts need folding, and from how many rows it folds them. */
export const COMPACT_INTERVAL_MS = 1_000
export const COMPACT_FROM_ROWS = 256

export type InventoryCounter = ReturnType<typeof createInventoryCounter>

/** Reads the inventory (kept while the change token holds) and folds the counts every second. */
export function createInventoryCounter(deps: { handle: DbHandle; logger: Logger }) {
  const { handle, logger } = deps
  const repository = createInventoryRepository(handle)
  const cache = createFreshCache<Inventory>('inventory', handle.changeToken, 1)
  let compacting: Promise<void> | undefined

  async function compactIfLong(): Promise<void> {
    if ((await repository.statusCountRows()) >= COMPACT_FROM_ROWS) await repository.compactStatusCounts()
  }

  const timer = setInterval(() => {
    compacting ??= compactIfLong()
      .catch((error) => logger.warn({ err: error }, 'folding the inventory counts failed'))
      .finally(() => {
        compacting = undefined
      })
  }, COMPACT_INTERVAL_MS)
  timer.unref()

  return {
    async read(): Promise<Inventory> {
      return cache.get('all', () => repository.readInventory())
    },
    async close(): Promise<void> {
      clearInterval(timer)
      await compacting
    },
  }
}
