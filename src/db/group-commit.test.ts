import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { Db } from './database.js'
import { createGroupCommit } from './group-commit.js'
import type { DbHandle } from './handle.js'
import { migrateToLatest } from './migrate.js'
import { openSqlite } from './sqlite.js'

const dir = mkdtempSync(join(tmpdir(), 'petstore-group-commit-'))
let handle: DbHandle
let db: Db
beforeAll(async () => {
  handle = openSqlite(join(dir, 'petstore.sqlite'))
  db = handle.db
  await migrateToLatest(db)
})
afterAll(async () => {
  await handle.close()
  rmSync(dir, { recursive: true, force: true })
})

const insertName = (trx: Db, name: string) =>
  trx
    .insertInto('pets')
    .values({ name, category_id: 1, status: null, created_at: 0 })
    .returning('id')
    .executeTakeFirstOrThrow()

test('writes of one event-loop turn commit in one transaction, each caller getting its own result', async () => {
  const transactions: number[] = []
  const insert = createGroupCommit(handle, async (trx, name: string) => {
    transactions.push(
      (
        await trx
          .selectFrom('pets')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n as number,
    )
    return insertName(trx, name)
  })
  const results = await Promise.all(['a', 'b', 'c', 'd'].map((name) => insert(name)))
  const ids = results.map((row) => row.id)
  expect(ids).toEqual([...ids].sort((x, y) => x - y))
  expect(new Set(ids).size).toBe(4)
  const later = await insert('e')
  expect(later.id).toBe((ids.at(-1) ?? 0) + 1)
})

test('writes of one turn share a transaction: when it fails, every write of the group fails and none is stored', async () => {
  const before = await db
    .selectFrom('pets')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  const insert = createGroupCommit(handle, async (trx, name: string) => {
    const row = await insertName(trx, name)
    if (name === 'poison') throw new Error('no')
    return row
  })
  const outcomes = await Promise.allSettled(['x', 'poison', 'y'].map((name) => insert(name)))
  expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected'])
  const after = await db
    .selectFrom('pets')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  expect(after.n).toBe(before.n)
})
