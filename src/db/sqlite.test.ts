import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { sql } from 'kysely'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { DbHandle } from './handle.js'
import { migrateToLatest } from './migrate.js'
import { openSqlite } from './sqlite.js'

const dir = mkdtempSync(join(tmpdir(), 'petstore-sqlite-'))
const path = join(dir, 'petstore.sqlite')
let handle: DbHandle
beforeAll(async () => {
  handle = openSqlite(path)
  await migrateToLatest(handle.db)
  for (const [name, status] of [
    ['A', 'sold'],
    ['B', null],
    ['C', 'sold'],
    ['D', 'sold'],
  ] as const) {
    await handle.db.insertInto('pets').values({ name, category_id: 1, status, created_at: 0 }).execute()
  }
})
afterAll(async () => {
  await handle.close()
  rmSync(dir, { recursive: true, force: true })
})

test('a prepared read runs the query compiled once with each call’s own arguments', async () => {
  const names = handle.prepareRead((db, afterId: number, limit: number) =>
    db.selectFrom('pets').select('name').where('id', '>', afterId).orderBy('id').limit(limit),
  )
  expect(await names(0, 2)).toEqual([{ name: 'A' }, { name: 'B' }])
  expect(await names(2, 5)).toEqual([{ name: 'C' }, { name: 'D' }])
})

test('a bound LIMIT and OFFSET reach SQLite behind a cast, which it does not plan with, and still bind', async () => {
  const query = handle.db.selectFrom('pets').select('name').orderBy('id').limit(2).offset(1)
  expect(query.compile().sql).toMatch(/ limit cast\(\? as integer\) offset cast\(\? as integer\)$/)
  expect(await query.execute()).toEqual([{ name: 'B' }, { name: 'C' }])
  const page = handle.prepareRead((db, limit: number) =>
    db.selectFrom('pets').select('name').orderBy('id').limit(limit),
  )
  expect(await page(1)).toEqual([{ name: 'A' }])
  expect(await page(3)).toEqual([{ name: 'A' }, { name: 'B' }, { name: 'C' }])
})

test('puts arguments where the SQL uses them, whatever their declared order, and keeps constants', async () => {
  const page = handle.prepareRead((db, limit: number, status: string, afterId: number) =>
    db
      .selectFrom('pets')
      .select('name')
      .where('id', '>', afterId)
      .where('status', '=', status)
      .where('category_id', '=', 1)
      .orderBy('id')
      .limit(limit),
  )
  expect(await page(1, 'sold', 1)).toEqual([{ name: 'C' }])
  expect(await page(5, 'sold', 0)).toEqual([{ name: 'A' }, { name: 'C' }, { name: 'D' }])
})

test('a read during another request’s open transaction never sees its uncommitted rows', async () => {
  const countPets = handle.prepareRead((db, minimum: number) =>
    db
      .selectFrom('pets')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('id', '>=', minimum),
  )
  let release = () => {}
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  let inserted = () => {}
  const insertDone = new Promise<void>((resolve) => {
    inserted = resolve
  })
  const before = Number((await countPets(1))[0]?.n)
  const writer = handle.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('pets')
      .values({ name: 'Uncommitted', category_id: 1, status: null, created_at: 0 })
      .execute()
    inserted()
    await held
    throw new Error('roll back')
  })
  await insertDone
  // Answered at once, from committed data, while the transaction is still open.
  expect(Number((await countPets(1))[0]?.n)).toBe(before)
  release()
  await expect(writer).rejects.toThrow('roll back')
  expect(Number((await countPets(1))[0]?.n)).toBe(before)
})

/** A later turn of the event loop: where the next request is handled. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

test('the change token moves on this handle’s own commits and on another process’s, seen from the next turn', async () => {
  const token = handle.changeToken ?? (() => undefined)
  const first = token()
  await nextTurn()
  expect(token()).toBe(first)
  await handle.db
    .insertInto('pets')
    .values({ name: 'Own', category_id: 1, status: null, created_at: 0 })
    .execute()
  await nextTurn()
  const second = token()
  expect(second).not.toBe(first)
  const other = new SQLite(path)
  other.prepare("INSERT INTO pets (name, category_id, created_at) VALUES ('Other', 1, 0)").run()
  other.close()
  // Read once per turn: a commit during the turn is concurrent with the requests of that turn.
  expect(token()).toBe(second)
  await nextTurn()
  expect(token()).not.toBe(second)
})

test('an error after SQLite rolled the transaction back by itself is the error the caller gets', async () => {
  const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })
  const before = await handle.db.selectFrom('pets').select('id').execute()
  const failing = handle.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('pets')
      .values({ name: 'Lost', category_id: 1, status: null, created_at: 0 })
      .execute()
    // What SQLite does by itself when the disk fills up while it writes the transaction.
    await sql.raw('ROLLBACK').execute(trx)
    throw full
  })
  await expect(failing).rejects.toBe(full)
  expect(await handle.db.selectFrom('pets').select('id').execute()).toEqual(before)
})

test('a write waiting for another connection’s lock has run none of its work (BEGIN IMMEDIATE), then runs it once', async () => {
  const bounded = openSqlite(path, { timeoutMs: 2_000 })
  const other = new SQLite(path)
  other.exec('begin immediate')
  let runs = 0
  const write = bounded.write(async (trx) => {
    runs++
    await trx.selectFrom('pets').select('id').limit(1).execute()
    await trx
      .insertInto('pets')
      .values({ name: 'Waited', category_id: 1, status: null, created_at: 0 })
      .execute()
  })
  try {
    // Several of write()'s tries (2, 4, 8, 16 ms apart): a deferred BEGIN would have read, then failed, each time.
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(runs).toBe(0)
  } finally {
    other.exec('commit')
    other.close()
  }
  await write
  expect(runs).toBe(1)
  await bounded.close()
})

test('a prepared write refuses to run outside write(): it would join whichever transaction is open', async () => {
  const rename = handle.prepareWrite((db, name: string) =>
    db.updateTable('pets').set({ name }).where('id', '=', 1),
  )
  expect(() => rename(handle.db, [['Outside']])).toThrow('a prepared write runs inside write()')
  await handle.write(async (trx) => {
    await rename(trx, [['Inside']])
  })
  const [pet] = await handle.db.selectFrom('pets').select('name').where('id', '=', 1).execute()
  expect(pet?.name).toBe('Inside')
})
