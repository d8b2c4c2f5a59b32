import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { hostname } from 'node:os'
import { describe, expect, it } from 'vitest'
import { isDeadOwner, ownerIdIn, ownerIdOf, startOf, thisProcess } from './owner.js'

const onLinux = thisProcess.start !== '' && thisProcess.namespace !== ''
/** This process as it would be with another start (an earlier process that had its pid). */
const earlier = { ...thisProcess, start: String(Number(thisProcess.start) - 500) }

describe('isDeadOwner', () => {
  it('knows a process that has exited is gone, and a live one is not', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'])
    const owner = ownerIdIn({ ...thisProcess, pid: child.pid ?? 0, start: startOf(child.pid ?? 0) }, 'uuid')
    expect(isDeadOwner(owner)).toBe(false)
    child.kill('SIGKILL')
    await once(child, 'exit')
    expect(isDeadOwner(owner)).toBe(true)
  })

  it('never judges another host, nor this process itself', () => {
    expect(isDeadOwner(`elsewhere/999999/1.1/some-uuid`)).toBe(false)
    expect(isDeadOwner(ownerIdOf('another-uuid'))).toBe(false)
  })

  it.runIf(onLinux)('knows an earlier process that had this pid, in this PID namespace, is gone', () => {
    expect(isDeadOwner(ownerIdIn(earlier, 'dead-uuid'))).toBe(true)
  })

  it.runIf(onLinux)('knows a live process that got a dead owner’s pid is not that owner', () => {
    expect(isDeadOwner(ownerIdIn({ ...thisProcess, pid: process.ppid, start: '1' }, 'dead-uuid'))).toBe(true)
  })

  it('never judges an owner in another PID namespace (another container with this host name), whatever its pid', () => {
    const elsewhere = { ...earlier, namespace: '1' }
    expect(isDeadOwner(ownerIdIn(elsewhere, 'live-uuid'))).toBe(false)
    expect(isDeadOwner(ownerIdIn({ ...elsewhere, pid: 999_999_999 }, 'live-uuid'))).toBe(false)
    expect(isDeadOwner(ownerIdIn({ ...elsewhere, namespace: '' }, 'live-uuid'))).toBe(false)
  })

  it('judges an owner written before the namespace and start were in the id by its pid alone', () => {
    expect(isDeadOwner(`${hostname()}/${process.pid}/old-uuid`, earlier)).toBe(false)
    expect(isDeadOwner(`${hostname()}/999999999/old-uuid`)).toBe(true)
  })
})
