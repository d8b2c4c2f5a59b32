import { useState } from 'preact/hooks'

/** Where a keyset-paged list is: the cursor of the page shown, and those of the pages before it. */
export interface Pages {
  /** The cursor of the page shown; undefined on the first page. */
  cursor: string | undefined
  /** Back to the first page (a filter changed). */
  reset(): void
  back(): void
  forward(next: string): void
}

/** Keyset pages only go forward: the cursors walked are kept, so "back" pops one. */
export function usePages(): Pages {
  const [cursors, setCursors] = useState<string[]>([])
  return {
    cursor: cursors.at(-1),
    reset: () => setCursors([]),
    back: () => setCursors(cursors.slice(0, -1)),
    forward: (next) => setCursors([...cursors, next]),
  }
}

interface Props {
  label: string
  pages: Pages
  /** The `nextCursor` of the page shown; absent on the last page. */
  next: string | undefined
  labels: readonly [back: string, forward: string]
}

/** The two buttons under a paged list. */
export function Pager({ label, pages, next, labels }: Props) {
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" disabled={pages.cursor === undefined} onClick={pages.back}>
        {labels[0]}
      </button>
      <button type="button" disabled={!next} onClick={() => next && pages.forward(next)}>
        {labels[1]}
      </button>
    </nav>
  )
}
