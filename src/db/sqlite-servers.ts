import { readdirSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'

/**
 * Marks this process as serving the SQLite file (an empty `<file>-serving-<pid>` beside it) and returns
 * what to warn about: the other live processes serving it (CONTRACT §1: their rate limits are then per
 * process). Marks of processes that are gone (killed, crashed) are removed. `release` removes this one's.
 */
export function markSqliteServer(path: string): { others: number[]; release(): void } {
  const folder = dirname(resolve(path))
  const prefix = `${basename(path)}-serving-`
  const others: number[] = []
  for (const name of readdirSync(folder)) {
    if (!name.startsWith(prefix)) continue
    const pid = Number(name.slice(prefix.length))
    if (pid === process.pid) continue
    if (isAlive(pid)) others.push(pid)
    else rmSync(join(folder, name), { force: true })
  }
  const mark = join(folder, `${prefix}${process.pid}`)
  writeFileSync(mark, '')
  return { others, release: () => rmSync(mark, { force: true }) }
}

function isAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: alive, but another user's.
    return (error as { code?: string }).code === 'EPERM'
  }
}

export function otherServersWarning(others: readonly number[]): string | undefined {
  if (others.length === 0) return undefined
  return `another petstore process (pid ${others.join(', ')}) serves this SQLite file: rate limits and caches are then per process; use PostgreSQL and Redis to run more than one instance`
}
