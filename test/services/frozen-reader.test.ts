import { fork } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { openPostgres, withServerOption } from '../../src/db/postgres.js'
import { createTestDatabase } from './test-stores.js'

/**
 * A process frozen (SIGSTOP, a paused VM) while PostgreSQL sends it a large result: its socket full and its
 * kernel still answering, the backend waits to write, in an active statement that no statement, lock or
 * idle timeout ends, and the transaction's locks stay held for the whole freeze. The service's connections
 * ask the server to close a connection whose data stays unread for the deadline (`tcp_user_timeout`).
 */

const DEADLINE_MS = 1_000
let database: Awaited<ReturnType<typeof createTestDatabase>>
let admin: pg.Client

beforeAll(async () => {
  database = await createTestDatabase()
  admin = new pg.Client({ connectionString: database.url })
  await admin.connect()
  await admin.query('CREATE TABLE held (id int PRIMARY KEY)')
  await admin.query('INSERT INTO held VALUES (1)')
})
afterAll(async () => {
  await admin?.end()
  await database?.drop()
})

/** Whether another session can lock the row the frozen one locked. */
async function rowIsFree(): Promise<boolean> {
  await admin.query('BEGIN')
  try {
    await admin.query('SELECT id FROM held WHERE id = 1 FOR UPDATE NOWAIT')
    return true
  } catch {
    return false
  } finally {
    await admin.query('ROLLBACK')
  }
}

test('a process frozen while it reads a large result holds its locks no longer than about the deadline', async () => {
  const frozen = fork(join(import.meta.dirname, 'frozen-reader.child.mjs'), {
    env: { ...process.env, URL: database.url, DEADLINE_MS: String(DEADLINE_MS) },
  })
  try {
    await once(frozen, 'message')
    frozen.kill('SIGSTOP')
    // Until the server's socket buffer is full, it is not waiting on the frozen client yet.
    await new Promise((done) => setTimeout(done, 300))
    expect(await rowIsFree()).toBe(false)
    const started = Date.now()
    while (!(await rowIsFree())) {
      // Without the option, held as long as the freeze lasts (statement_timeout does not end a backend
      // waiting to write to its client).
      expect(Date.now() - started).toBeLessThan(DEADLINE_MS * 8)
      await new Promise((done) => setTimeout(done, 250))
    }
  } finally {
    frozen.kill('SIGKILL')
  }
})

test('the deadline reaches the server beside what DATABASE_URL asks of `options`, else PGOPTIONS', async () => {
  const settingsOf = async (url: string, env: Record<string, string | undefined>) => {
    const saved = process.env.PGOPTIONS
    if (env.PGOPTIONS === undefined) delete process.env.PGOPTIONS
    else process.env.PGOPTIONS = env.PGOPTIONS
    const handle = openPostgres({ kind: 'postgres', url, poolSize: 1, timeoutMs: 1_500 }, 1_500)
    try {
      const { rows } = await sql<{ timeout: string; name: string }>`
        SELECT current_setting('tcp_user_timeout') AS timeout, current_setting('application_name') AS name`.execute(
        handle.db,
      )
      return rows[0]
    } finally {
      await handle.close()
      if (saved === undefined) delete process.env.PGOPTIONS
      else process.env.PGOPTIONS = saved
    }
  }
  const withOptions = `${database.url}${database.url.includes('?') ? '&' : '?'}options=-c%20application_name%3Dfrom-url`
  expect(await settingsOf(withOptions, {})).toEqual({ timeout: '1500', name: 'from-url' })
  expect(await settingsOf(database.url, { PGOPTIONS: '-c application_name=from-env' })).toEqual({
    timeout: '1500',
    name: 'from-env',
  })
  expect(withServerOption('postgres://h/db?sslmode=disable&options=-c%20a%3Db&x=y%20z', 'n=1', {})).toEqual({
    url: 'postgres://h/db?sslmode=disable&x=y%20z',
    options: '-c a=b -c n=1',
  })
})
