import { setTimeout as delay } from 'node:timers/promises'
import type { Db } from '../../src/db/database.js'
import type { DbHandle } from '../../src/db/handle.js'

/**
 * Whether `waiting` finished while a write that ran `holding` was kept open: the write runs `holding`, then
 * stays open while `waiting` starts; 300 ms later it commits, and both are waited for. False when `waiting`
 * waited for the write (for a lock or a row it holds; on SQLite every write waits for the one before).
 */
export async function finishedWhileHeld(
  handle: DbHandle,
  holding: (trx: Db) => Promise<unknown>,
  waiting: () => Promise<unknown>,
): Promise<boolean> {
  let commit = () => {}
  const held = new Promise<void>((resolve) => {
    commit = resolve
  })
  let ran = () => {}
  const ready = new Promise<void>((resolve) => {
    ran = resolve
  })
  const write = handle.write(async (trx) => {
    await holding(trx)
    ran()
    await held
  })
  // A `holding` that throws: nothing is held, and the write's error is what the caller gets.
  write.catch(ran)
  await ready
  let finished = false
  const waited = waiting().then(() => {
    finished = true
  })
  await delay(300)
  const meanwhile = finished
  commit()
  await write
  await waited
  return meanwhile
}
