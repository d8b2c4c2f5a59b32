import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'

/** Clock ticks per second of /proc's CPU times (100 on Linux almost everywhere; asked, not assumed). */
const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
export const TICK_MICROSECONDS = 1e6 / TICKS_PER_SECOND

/** A /proc/<pid>/stat line's fields after the command name (which may hold spaces), from field 3 on. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined // gone
  }
}

/** User + system CPU of the processes, in clock ticks (a process gone since is counted as 0). */
export function cpuTicks(pids: readonly number[]): number {
  let ticks = 0
  for (const pid of pids) {
    const fields = statFields(pid)
    // Fields 14 and 15 (utime, stime) are at 11 and 12 once the first two are cut off.
    if (fields) ticks += Number(fields[11]) + Number(fields[12])
  }
  return ticks
}

/** A process and all of its children (PostgreSQL's postmaster and its backends). */
export function withChildren(parent: number): number[] {
  const children = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => statFields(pid)?.[1] === String(parent))
  return [parent, ...children]
}
