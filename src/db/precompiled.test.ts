import { afterAll, beforeAll, expect, test } from 'vitest'
import { connectDatabase } from './connect.js'
import type { Db } from './database.js'
import { migrateToLatest } from './migrate.js'
import { precompiled } from './precompiled.js'

let db: Db
beforeAll(async () => {
  db = connectDatabase({ kind: 'sqlite', path: ':memory:' })
  await migrateToLatest(db)
  for (const [name, status] of [
    ['A', 'sold'],
    ['B', null],
    ['C', 'sold'],
    ['D', 'sold'],
  ] as const) {
    await db.insertInto('pets').values({ name, category_id: 1, status, created_at: 0 }).execute()
  }
})
afterAll(() => db.destroy())

test('runs the query compiled on first use with each call’s own arguments', async () => {
  const names = precompiled((handle, afterId: number, limit: number) =>
    handle.selectFrom('pets').select('name').where('id', '>', afterId).orderBy('id').limit(limit),
  )
  expect(await names(db, 0, 2)).toEqual([{ name: 'A' }, { name: 'B' }])
  expect(await names(db, 2, 5)).toEqual([{ name: 'C' }, { name: 'D' }])
})

test('puts arguments where the SQL uses them, whatever their declared order, and keeps constants', async () => {
  const page = precompiled((handle, limit: number, status: string, afterId: number) =>
    handle
      .selectFrom('pets')
      .select('name')
      .where('id', '>', afterId)
      .where('status', '=', status)
      .where('category_id', '=', 1)
      .orderBy('id')
      .limit(limit),
  )
  expect(await page(db, 1, 'sold', 1)).toEqual([{ name: 'C' }])
  expect(await page(db, 5, 'sold', 0)).toEqual([{ name: 'A' }, { name: 'C' }, { name: 'D' }])
})

test('a read during another request’s open transaction never sees its uncommitted rows', async () => {
  const countPets = precompiled((handle, minimum: number) =>
    handle
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
  const before = Number((await countPets(db, 1))[0]?.n)
  const writer = db.transaction().execute(async (trx) => {
    await trx
      .insertInto('pets')
      .values({ name: 'Uncommitted', category_id: 1, status: null, created_at: 0 })
      .execute()
    inserted()
    await held
    throw new Error('roll back')
  })
  await insertDone
  const reader = countPets(db, 1)
  release()
  await expect(writer).rejects.toThrow('roll back')
  expect(Number((await reader)[0]?.n)).toBe(before)
})
