import type SQLite from 'better-sqlite3'

interface RawRead {
  statement: SQLite.Statement
  columns: string[]
}

/** Most distinct SQL texts kept prepared; queries are parameterised, so the real set is small. */
const STATEMENT_CACHE_SIZE = 200

/**
 * Runs precompiled reads straight on better-sqlite3: each SQL text prepared once, rows fetched as
 * arrays (better-sqlite3 builds arrays about a third faster than objects) and turned into objects
 * here. Returns undefined when the query must go through Kysely instead: inside a transaction (the
 * connection then belongs to it, and Kysely makes other queries wait their turn) or for a write.
 */
export function createSqliteReader(sqlite: SQLite.Database) {
  const reads = new Map<string, RawRead | null>()

  function prepare(sql: string): RawRead | null {
    let read = reads.get(sql)
    if (read === undefined) {
      if (reads.size >= STATEMENT_CACHE_SIZE) reads.clear()
      const statement = sqlite.prepare(sql)
      read = statement.reader
        ? { statement: statement.raw(true), columns: statement.columns().map((c) => c.name) }
        : null
      reads.set(sql, read)
    }
    return read
  }

  return (sql: string, parameters: readonly unknown[]): Record<string, unknown>[] | undefined => {
    if (sqlite.inTransaction) return undefined
    const read = prepare(sql)
    if (!read) return undefined
    const { statement, columns } = read
    return (statement.all(parameters) as unknown[][]).map((values) => {
      const row: Record<string, unknown> = {}
      for (let index = 0; index < columns.length; index++) row[columns[index] as string] = values[index]
      return row
    })
  }
}

/**
 * Kysely prepares every query it runs; better-sqlite3 statements are reusable, so each SQL text is
 * prepared once. (Statements run to completion synchronously, so sharing one is safe.)
 */
export function withStatementCache(sqlite: SQLite.Database) {
  const statements = new Map<string, SQLite.Statement>()
  return {
    close: () => sqlite.close(),
    prepare: (sql: string) => {
      let statement = statements.get(sql)
      if (!statement) {
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.clear()
        statement = sqlite.prepare(sql)
        statements.set(sql, statement)
      }
      return statement
    },
  }
}
