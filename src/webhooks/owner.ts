import { readFileSync } from 'node:fs'
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

const started = startOf('self')

/**
 * A dispatcher's owner id: `host/pid/start/uuid`. On SQLite every process that shares the file runs on
 * this host, so a lease whose process is gone is known dead at once (a restart resumes without waiting
 * for it to lapse); elsewhere a lease ends when its owner stops renewing it. The start tells a process
 * from an earlier one that had its pid: a container's restarted process is PID 1 again, on the same host.
 */
export const ownerIdOf = (uuid: string): string => `${hostname()}/${process.pid}/${started}/${uuid}`

/**
 * Whether the process named in `owner` is known to be gone: this host, and no such process, or one that
 * started at another time (its pid was given again). Owners written before the start was part of the id
 * (`host/pid/uuid`) are judged by their pid alone.
 */
export function isDeadOwner(owner: string, self = { pid: process.pid, start: started }): boolean {
  const [host, pidText, ...rest] = owner.split('/')
  const start = rest.length > 1 ? rest[0] : ''
  const pid = Number(pidText)
  if (host !== hostname() || !Number.isInteger(pid) || pid <= 0) return false
  const otherStart = (running: string) => start !== '' && running !== '' && running !== start
  if (pid === self.pid) return otherStart(self.start)
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH'
  }
  return otherStart(startOf(pid))
}
