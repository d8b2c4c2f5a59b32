import Type from 'typebox'
import { decodeCursor, encodeCursor } from './cursor.js'

/** The `cursor` query parameter of every listing, as its schema documents it. */
export const CursorQuery = Type.Optional(
  Type.String({ description: 'Opaque position of the next page, taken from the `Link: rel="next"` header.' }),
)

/** One page of a keyset walk: the items, and the cursor of the next page when one follows. */
export interface Page<T> {
  readonly items: T[]
  /** Present when another page follows. */
  readonly nextCursor?: string
}

/**
 * The position a page starts after: 0 for the first page, else the id the cursor names (a malformed
 * cursor is a 400). Judged before anything is read or cached, so every input gets one verdict.
 */
export function afterIdOf(cursor: string | undefined): number {
  return cursor === undefined ? 0 : decodeCursor(cursor)
}

/**
 * The keyset step: rows read ascending by id after the page's position, one more than `limit` (that one
 * tells whether a next page exists without a count), become the page and its next cursor.
 */
export function keysetPage<T extends { id: number }>(rows: readonly T[], limit: number): Page<T> {
  const items = rows.slice(0, limit)
  const last = items.at(-1)
  return rows.length > limit && last ? { items, nextCursor: encodeCursor(last.id) } : { items }
}
