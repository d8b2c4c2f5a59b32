import { readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { type RssSample, rssSample } from './rss.js'

/**
 * Live memory of a server process after a full garbage collection, without changing its code: the
 * process runs with `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=<dir>` (see `heapCheckEnv`), and a
 * heap snapshot, which V8 takes only after a full collection, is asked for with SIGUSR2. The live heap is
 * the sum of the snapshot's node sizes; RSS is read right after it. V8 collects the old generation lazily
 * under load, so RSS sampled mid-run mostly measures garbage not yet collected.
 */
export function heapCheckEnv(dir: string): NodeJS.ProcessEnv {
  return { NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${dir}` }
}

export interface AfterGc {
  /** RSS just before the collection: live data plus garbage not yet collected. */
  rssBefore: RssSample
  liveHeapMB: number
  /** RSS just after (it includes the snapshot's own buffers, the same each time). */
  rss: RssSample
}

export async function measureAfterGc(pid: number, dir: string): Promise<AfterGc> {
  const before = new Set(readdirSync(dir))
  const rssBefore = rssSample(pid)
  process.kill(pid, 'SIGUSR2')
  for (let attempt = 0; attempt < 600; attempt++) {
    await delay(100)
    const file = readdirSync(dir).find((name) => name.endsWith('.heapsnapshot') && !before.has(name))
    if (!file) continue
    const snapshot = parseWhenComplete(join(dir, file))
    if (!snapshot) continue
    rmSync(join(dir, file))
    return { rssBefore, liveHeapMB: liveHeapBytes(snapshot) / 2 ** 20, rss: rssSample(pid) }
  }
  throw new Error('no heap snapshot within 60 s')
}

type Snapshot = { snapshot: { meta: { node_fields: string[] } }; nodes: number[] }

/** The snapshot once it is fully written (until then it does not parse). */
function parseWhenComplete(path: string): Snapshot | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Snapshot
  } catch {
    return undefined
  }
}

function liveHeapBytes(snapshot: Snapshot): number {
  const fields = snapshot.snapshot.meta.node_fields
  const selfSize = fields.indexOf('self_size')
  let total = 0
  for (let i = selfSize; i < snapshot.nodes.length; i += fields.length) total += snapshot.nodes[i] ?? 0
  return total
}
