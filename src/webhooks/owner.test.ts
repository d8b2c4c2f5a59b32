import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { hostname } from 'node:os'
import { describe, expect, it } from 'vitest'
import { isDeadOwner, ownerIdOf, startOf } from './owner.js'

const onLinux = startOf('self') !== ''

describe('isDeadOwner', () => {
  it('knows a process that has exited is gone, and a live one is not', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'])
    const owner = `${hostname()}/${child.pid}/${startOf(child.pid ?? 0)}/some-uuid`
    expect(isDeadOwner(owner)).toBe(false)
    child.kill('SIGKILL')
    await once(child, 'exit')
    expect(isDeadOwner(owner)).toBe(true)
  })

  it('never judges another host, nor this process itself', () => {
    expect(isDeadOwner(`elsewhere/999999/1/some-uuid`)).toBe(false)
    expect(isDeadOwner(ownerIdOf('another-uuid'))).toBe(false)
  })

  it.runIf(onLinux)(
    'knows an earlier process that had this pid is gone (a container restarted: PID 1 again, the same host)',
    () => {
      const earlier = ownerIdOf('dead-uuid')
      expect(isDeadOwner(earlier, { pid: process.pid, start: String(Number(startOf('self')) + 500) })).toBe(
        true,
      )
    },
  )

  it.runIf(onLinux)('knows a live process that got a dead owner’s pid is not that owner', () => {
    const reused = `${hostname()}/${process.ppid}/1/dead-uuid`
    expect(isDeadOwner(reused)).toBe(true)
  })

  it('judges an owner written before the start was in the id by its pid alone', () => {
    expect(isDeadOwner(`${hostname()}/${process.pid}/old-uuid`, { pid: process.pid, start: '12345' })).toBe(
      false,
    )
    expect(isDeadOwner(`${hostname()}/999999999/old-uuid`)).toBe(true)
  })
})
