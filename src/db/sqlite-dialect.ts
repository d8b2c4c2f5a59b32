import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type LimitNode,
  type OffsetNode,
  type QueryCompiler,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
  SqliteQueryCompiler,
} from 'kysely'

/**
 * Kysely's SQLite dialect as the handle (sqlite.ts) runs it: its write transactions begin IMMEDIATE, and
 * its compiler casts a bound LIMIT or OFFSET (BoundLimitCompiler, below).
 *
 * Write transactions begin IMMEDIATE. With another connection writing (the webhook dispatcher's thread,
 * another instance on the file), a write then fails at its BEGIN, before it has read anything, and
 * write() tries it again on a timer; a deferred BEGIN failed at its first write statement, after its
 * reads, which every try did again (placeOrder beside the dispatcher's thread: 4× its CPU).
 */
export class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig
  constructor(config: SqliteDialectConfig) {
    super(config)
    this.#config = config
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config)
  }
  override createQueryCompiler(): QueryCompiler {
    return new BoundLimitCompiler()
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'))
  }
}

/**
 * `limit cast(? as integer)` instead of `limit ?`. SQLite (3.53 here) reads a bound LIMIT's value when it
 * plans, so every new binding expires the statement and the next run prepares it again: the dispatcher's
 * one-row take (`... order by due_at, id limit ?`) ran in 12 µs against 3 with the cast and its status
 * written in (bench/sqlite-plans.ts, src/db/README.md). Behind a cast the value is read at run time only;
 * the plans here do not need it.
 */
class BoundLimitCompiler extends SqliteQueryCompiler {
  protected override visitLimit(node: LimitNode): void {
    this.append('limit cast(')
    this.visitNode(node.limit)
    this.append(' as integer)')
  }
  protected override visitOffset(node: OffsetNode): void {
    this.append('offset cast(')
    this.visitNode(node.offset)
    this.append(' as integer)')
  }
}
