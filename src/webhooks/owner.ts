import { readFileSync, readlinkSync } from 'node:fs'
import { hostname } from 'node:os'

/**
 * When the process `pid` started, in the kernel's clock ticks since boot (Linux's /proc/<pid>/stat, field
 * 22); '' where that cannot be read (another system, or no such process).
 */
export function startOf(pid: number | 'self'): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name, which is in parentheses and may hold spaces: field 3 is the first.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? ''
  } catch {
    return ''
  }
}

/** This process's PID namespace (Linux: `pid:[4026531836]` is 4026531836); '' where it cannot be read. */
function pidNamespace(): string {
  try {
    return /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? ''
  } catch {
    return ''
  }
}

/** This process: its pid, where that pid means something (its PID namespace), and when it started. */
export const thisProcess: Readonly<{ pid: number; namespace: string; start: string }> = {
  pid: process.pid,
  namespace: pidNamespace(),
  start: startOf('self'),
}

/** The owner id of a dispatcher `uuid` in process `of`: `host/pid/ns.start/uuid`. */
export const ownerIdIn = (of: typeof thisProcess, uuid: string): string =>
  `${hostname()}/${of.pid}/${of.namespace}.${of.start}/${uuid}`

/**
 * A dispatcher's owner id: `host/pid/ns.start/uuid`. On SQLite every process that shares the file runs
 * on this host, so a lease whose process is gone is known dead at once (a restart resumes without waiting
 * for it to lapse); elsewhere a lease ends when its owner stops renewing it. The PID namespace says
 * whether a pid can be looked up from here at all (two containers may share a host name and a volume, each
 * with its own PID 1); the start tells a process from an earlier one that had its pid.
 */
export const ownerIdOf = (uuid: string): string => ownerIdIn(thisProcess, uuid)

/**
 * Whether the process named in `owner` is known to be gone: this host and this PID namespace, and no such
 * process, or one that started at another time (its pid was given again). An owner in another namespace
 * is never judged (its pid means another process here), nor one this process cannot place. Owners written
 * before the namespace and start were part of the id (`host/pid/uuid`) are judged by their pid alone.
 */
export function isDeadOwner(owner: string, here = thisProcess): boolean {
  const [host, pidText, ...rest] = owner.split('/')
  const pid = Number(pidText)
  if (host !== hostname() || !Number.isInteger(pid) || pid <= 0) return false
  const [namespace = '', start = ''] = rest.length > 1 ? (rest[0] ?? '').split('.') : []
  if (rest.length > 1 && (namespace === '' || namespace !== here.namespace)) return false
  const startedElsewhen = (running: string) => start !== '' && running !== '' && running !== start
  if (pid === here.pid) return startedElsewhen(here.start)
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH'
  }
  return startedElsewhen(startOf(pid))
}
