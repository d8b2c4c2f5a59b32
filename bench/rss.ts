import { readFileSync } from 'node:fs'

/**
 * A process's resident memory in MB: all of it, and its anonymous part (heaps, buffers, SQLite's page
 * cache). The rest is file pages mapped in, mostly the database file under SQLite's mmap: they grow with
 * the file (a soak writes tens of thousands of pets) and the kernel reclaims them at will.
 */
export type RssSample = { total: number; anonymous: number }

export function rssSample(pid: number): RssSample {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const mb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024
  return { total: mb('VmRSS'), anonymous: mb('RssAnon') }
}

/** The whole RSS in MB; 0 once the process is gone. */
export function rssMB(pid: number): number {
  try {
    return rssSample(pid).total
  } catch {
    return 0
  }
}
