import { expect } from 'vitest'
import type { Receiver } from './harness.js'

/**
 * What must hold of the deliveries of `pet.created` events once the service has caught up: every pet
 * that is stored was delivered at least once, nothing was delivered for a pet that is not stored, and a
 * duplicate is the same delivery (same `webhook-id`, same body). Waits up to `timeoutMs` for the tail.
 */
export async function expectEveryCommitDelivered(
  receiver: Receiver,
  storedIds: readonly number[],
  timeoutMs = 30_000,
): Promise<{ deliveries: number; duplicates: number }> {
  const created = () =>
    receiver.received
      .map((delivery) => ({ id: String(delivery.headers['webhook-id']), body: delivery.body }))
      .map((delivery) => ({ ...delivery, event: JSON.parse(delivery.body) }))
      .filter(({ event }) => event.type === 'pet.created')
  const deliveredPets = () => new Set(created().map(({ event }) => event.data.object.id as number))
  await expect
    .poll(() => storedIds.filter((id) => !deliveredPets().has(id)).length, {
      timeout: timeoutMs,
      interval: 200,
    })
    .toBe(0)
  const stored = new Set(storedIds)
  expect([...deliveredPets()].filter((id) => !stored.has(id))).toEqual([])
  const bodyOf = new Map<string, string>()
  let duplicates = 0
  for (const { id, body } of created()) {
    if (bodyOf.has(id)) {
      duplicates++
      expect(body).toBe(bodyOf.get(id))
    }
    bodyOf.set(id, body)
  }
  // One event per pet: two ids for one pet would be a change emitted twice.
  expect(new Set(created().map(({ event }) => event.data.object.id)).size).toBe(bodyOf.size)
  return { deliveries: created().length, duplicates }
}
