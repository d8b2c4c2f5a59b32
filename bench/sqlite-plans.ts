/**
 * What SQLite's planning with bound values costs a statement run: `npx tsx bench/sqlite-plans.ts [--rounds
 * R --runs N]`. On a file migrated as the service's, `webhook_attempts` filled with 200,000 rows (1,000
 * pending, one per endpoint), a lane's take (the dispatcher's `dueOf`: one endpoint's due attempts, oldest
 * first) compiled two ways and run N times a round on one connection, the endpoint changing every run:
 * as Kysely's own SQLite compiler writes it (`status = ?` and `limit ?` bound), and as the service's
 * handle does (`'pending'` in the text, `limit cast(? as integer)`). Alternating rounds, µs per run, the
 * median over the rounds (src/db/README.md: "Statements SQLite plans once").
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import SQLite from 'better-sqlite3'
import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely'
import type { Database, Db } from '../src/db/database.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { openSqlite } from '../src/db/sqlite.js'
import { PENDING } from '../src/webhooks/attempts.repository.js'
import { median } from './lib.js'

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '6' }, runs: { type: 'string', default: '50000' } },
})
const ROUNDS = Number(values.rounds)
const RUNS = Number(values.runs)
const ENDPOINTS = 1_000
const ROWS = 200_000

/** The take, with `status` compared to `pending` as the caller gives it (a bound value, or text). */
const take = (db: Db, pending: string | typeof PENDING) =>
  db
    .selectFrom('webhook_attempts')
    .select('id')
    .where('endpoint_id', '=', 1)
    .where('status', '=', pending)
    .where('due_at', '<=', Number.MAX_SAFE_INTEGER)
    .where((eb) => eb.or([eb('lease_token', 'is', null), eb('lease_token', '<>', 'me')]))
    .orderBy('due_at')
    .orderBy('id')
    .limit(10)

const plainSqlite = new Kysely<Database>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
})

const dir = mkdtempSync(join(tmpdir(), 'petstore-plans-'))
try {
  const path = join(dir, 'plans.sqlite')
  const handle = openSqlite(path)
  await migrateToLatest(handle.db)
  const variants = {
    bound: take(plainSqlite, 'pending').compile(),
    'in the text': take(handle.db, PENDING).compile(),
  }
  await handle.close()
  const connection = new SQLite(path)
  connection.pragma('foreign_keys = OFF')
  const insert = connection.prepare(
    `insert into webhook_attempts (event_seq, endpoint_id, attempt, status, due_at, at) values (?, ?, 1, ?, ?, ?)`,
  )
  connection.transaction(() => {
    for (let i = 0; i < ROWS; i++)
      insert.run(i, i % ENDPOINTS, i >= ROWS - ENDPOINTS ? 'pending' : 'succeeded', i, i)
  })()
  const timings = new Map<string, number[]>()
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, compiled] of Object.entries(variants)) {
      const statement = connection.prepare(compiled.sql)
      const parameters = [...compiled.parameters]
      const started = process.hrtime.bigint()
      for (let run = 0; run < RUNS; run++) {
        parameters[0] = run % ENDPOINTS
        if (statement.all(parameters).length !== 1) throw new Error(`${name}: not one row`)
      }
      const micros = Number(process.hrtime.bigint() - started) / 1_000 / RUNS
      timings.set(name, [...(timings.get(name) ?? []), micros])
    }
  }
  connection.close()
  for (const [name, compiled] of Object.entries(variants))
    console.log(`${name}: ${median(timings.get(name) ?? []).toFixed(2)} µs a run\n  ${compiled.sql}`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
