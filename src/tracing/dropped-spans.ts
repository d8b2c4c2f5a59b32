/**
 * Spans not exported, by why: the collector refused or did not answer (`export_failed`), the queue was full
 * (`queue_full`), or the collector took the batch but said it rejected some of it (`rejected`, OTLP's
 * partial success).
 */
export type DroppedSpans = Record<'export_failed' | 'queue_full' | 'rejected', number>

export const noDroppedSpans = (): DroppedSpans => ({ export_failed: 0, queue_full: 0, rejected: 0 })

/** This thread's dropped spans (each thread has its own): counted here, exposed by /metrics (http/metrics.ts). */
export const droppedSpans: DroppedSpans = noDroppedSpans()

/** Adds `more` to this thread's count, reason by reason (the dispatcher's thread reports its own). */
export function countDroppedSpans(more: DroppedSpans): void {
  for (const [reason, count] of Object.entries(more) as [keyof DroppedSpans, number][]) {
    droppedSpans[reason] += count
  }
}
