import { expect, it } from 'vitest'
import { createLeasesRepository } from '../../src/webhooks/leases.repository.js'
import { ownerIdIn, ownerIdOf, thisProcess } from '../../src/webhooks/owner.js'
import { build, onServices } from '../helpers.js'
import { endpointsWithDueAttempts } from './harness.js'

/**
 * Endpoints are leased the longest unleased first: one let go waits behind those that waited longer, so
 * when fewer leases are free than endpoints with work (an instance at its cap, several instances), every
 * endpoint gets its turn. A release that forgot when it ended made a let-go endpoint tie with those never
 * leased, and the lowest id won every round.
 */
it('leases endpoints with work in turn, one let go behind those that waited longer', async (context) => {
  const t = await build(context)
  const handle = t.deps.database
  const { db } = handle
  const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
  const start = t.clock.now()
  const { ids } = await endpointsWithDueAttempts(db, account, 3, start)
  const leases = createLeasesRepository(handle)
  const owner = 'host/1/turns'
  const leasedInTurn: number[] = []
  for (let round = 0; round < 6; round++) {
    const now = start + 1_000 * (round + 1)
    const leased = await handle.write((trx) => leases.acquire(trx, { owner, now, leaseMs: 5_000, limit: 1 }))
    leasedInTurn.push(...leased.map((endpoint) => endpoint.id))
    await handle.write((trx) => leases.release(trx, owner, leasedInTurn.slice(-1), now + 500))
  }
  expect(leasedInTurn).toEqual([...ids, ...ids])
})

/**
 * SQLite: a lease whose process is gone is taken at once, including one of an earlier process that had
 * this process's pid (a container restarted: PID 1 again, the same host name), told apart by its start.
 */
it.skipIf(onServices || thisProcess.start === '' || thisProcess.namespace === '')(
  'takes over at once the lease of an earlier process that had this pid',
  async (context) => {
    const t = await build(context)
    const handle = t.deps.database
    const account = (await t.deps.apiKeys.verifyApiKey(await t.issueKey())).id
    const now = t.clock.now()
    await endpointsWithDueAttempts(handle.db, account, 1, now)
    const earlier = ownerIdIn(
      { ...thisProcess, start: String(Number(thisProcess.start) - 500) },
      'the-killed-one',
    )
    await handle.db
      .updateTable('webhook_endpoints')
      .set({ lease_owner: earlier, lease_until: now + 5_000 })
      .execute()
    const leases = createLeasesRepository(handle)
    const owner = ownerIdOf('restarted')
    const leased = await handle.write((trx) =>
      leases.acquire(trx, { owner, now: now + 100, leaseMs: 5_000, limit: 1 }),
    )
    expect(leased).toHaveLength(1)
  },
)
