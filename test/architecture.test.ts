import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { expect, test } from 'vitest'

/**
 * Feature folders write SQL only in their repositories (`*.repository.ts`): routes, services and the rest
 * call those. `src/db/` is the database layer itself (connections, dialects, migrations, locks, the write
 * probe) and may speak SQL anywhere.
 */
const sources = execFileSync('git', ['ls-files', 'src'], { encoding: 'utf8' })
  .split('\n')
  .filter((path) => path.endsWith('.ts') && !path.endsWith('.test.ts') && !path.startsWith('src/db/'))
/** A Kysely query builder started, or a raw SQL template. */
const SQL = /\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\(|\bsql`|\bsql</

test('the rule reads the folders it is about (a change of layout would make it check nothing)', () => {
  expect(sources).toEqual(expect.arrayContaining(['src/webhooks/step.ts', 'src/pets/pets.service.ts']))
  expect(sources.filter((path) => path.endsWith('.repository.ts')).length).toBeGreaterThan(10)
})

test('SQL is written only in repositories, outside src/db/', () => {
  const speaking = sources.filter(
    (path) => !path.endsWith('.repository.ts') && SQL.test(readFileSync(path, 'utf8')),
  )
  expect(speaking).toEqual([])
})

/**
 * A query compares a partial index's column with that index's constant written into the SQL text
 * (`PENDING`, `WAITING`), never bound: against a bound value SQLite plans with the value, so each run
 * prepares the statement again (src/db/README.md, "Statements SQLite plans once").
 */
const BOUND_INDEX_CONSTANT = /'(\w+\.)?status', '(=|<>)', 'pending'|'(\w+\.)?fanned_out', '=', 0\b/

test('the constants of partial indexes are written into the SQL, never bound', () => {
  expect(BOUND_INDEX_CONSTANT.test(".where('a.status', '=', 'pending')")).toBe(true)
  const binding = sources.filter((path) => BOUND_INDEX_CONSTANT.test(readFileSync(path, 'utf8')))
  expect(binding).toEqual([])
})
