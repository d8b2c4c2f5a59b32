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

test('writes of one event-loop turn reach writeAll together in one transaction, each caller getting its own result', async () => {
  const groups: string[][] = []
  const insert = createGroupCommit(handle, async (trx, names: string[]) => {
    groups.push(names)
    const rows: { id: number }[] = []
    for (const name of names) rows.push(await insertName(trx, name))
    return rows
  })
  const results = await Promise.all(['a', 'b', 'c', 'd'].map((name) => insert(name)))
  expect(groups).toEqual([['a', 'b', 'c', 'd']])
  const ids = results.map((row) => row.id)
  expect(ids).toEqual([...ids].sort((x, y) => x - y))
  expect(new Set(ids).size).toBe(4)
  const later = await insert('e')
  expect(groups).toEqual([['a', 'b', 'c', 'd'], ['e']])
  expect(later.id).toBe((ids.at(-1) ?? 0) + 1)
})

test('writes of one turn share a transaction: when it fails, every write of the group fails and none is stored', async () => {
  const count = async () =>
    (
      await db
        .selectFrom('pets')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n
  const before = await count()
  const insert = createGroupCommit(handle, async (trx, names: string[]) => {
    const rows: { id: number }[] = []
    for (const name of names) rows.push(await insertName(trx, name))
    if (names.includes('poison')) throw new Error('no')
    return rows
  })
  const outcomes = await Promise.allSettled(['x', 'poison', 'y'].map((name) => insert(name)))
  expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected'])
  expect(await count()).toBe(before)
})
