import type { Span } from '@opentelemetry/api'
import { recordingSpan, sharedBy } from '../tracing/tracing.js'

/**
 * Calls made during one turn of the event loop, answered together by one `load` of all their keys. The
 * load is sent once the turn's I/O callbacks are done (setImmediate): every caller asked before it was
 * sent, and each asked after its own request arrived, so the load reads what was committed when each
 * request arrived, or later, never earlier. A caller of the next turn waits for the next load; a failed
 * load fails its callers only. With tracing on, the load's spans go under the first traced caller's span,
 * and the other traced callers' spans link to it (`sharedBy`).
 *
 * @example const petById = batchByTurn((ids: number[]) => readPets(ids))  // one query per turn
 */
export function batchByTurn<K, V>(
  load: (keys: K[]) => Promise<ReadonlyMap<K, V>>,
): (key: K) => Promise<V | undefined> {
  let next: { keys: Set<K>; spans: Span[]; answer: Promise<ReadonlyMap<K, V>> } | undefined
  return (key) => {
    if (!next) {
      const keys = new Set<K>()
      const spans: Span[] = []
      const answer = new Promise<ReadonlyMap<K, V>>((resolve, reject) => {
        setImmediate(() => {
          next = undefined
          sharedBy(spans, () => load([...keys])).then(resolve, reject)
        })
      })
      next = { keys, spans, answer }
    }
    next.keys.add(key)
    const span = recordingSpan()
    if (span) next.spans.push(span)
    return next.answer.then((values) => values.get(key))
  }
}
