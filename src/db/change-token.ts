import type { Db } from './database.js'

/** A value that changes whenever another connection commits to the database. */
export type ChangeToken = () => unknown

const tokens = new WeakMap<Db, ChangeToken>()

export function registerChangeToken(db: Db, token: ChangeToken): void {
  tokens.set(db, token)
}

/** The database's change token, when its driver has one (SQLite: `PRAGMA data_version`). */
export function changeTokenOf(db: Db): ChangeToken | undefined {
  return tokens.get(db)
}
