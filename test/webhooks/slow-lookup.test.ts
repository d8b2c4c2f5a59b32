import { afterAll, beforeAll, expect, it } from 'vitest'
import type { Resolve } from '../../src/webhooks/address.js'
import { loopbackResolve, type Receiver, startReceiver, startWebhookApp, type WebhookApp } from './harness.js'

let t: WebhookApp
let receiver: Receiver
/** While set, a lookup of `slow.test` says so (`looking`) and answers once `answered` resolves. */
let held: { looking: () => void; answered: Promise<void> } | undefined

/** `slow.test` is loopback, answered when the test says (a DNS server this slow). */
const slowResolve: Resolve = async (hostname) => {
  if (hostname === 'slow.test' && held) {
    held.looking()
    await held.answered
  }
  return loopbackResolve(hostname)
}

beforeAll(async () => {
  receiver = await startReceiver()
  t = await startWebhookApp({ resolve: slowResolve })
})
afterAll(async () => {
  await t.close()
  await receiver.close()
})

/**
 * An endpoint on the slow name and a pet created, its event's attempt read as the dispatcher's own and
 * waiting on the name (`looking` settles then) until `answer` lets the lookup answer.
 */
async function attemptWaitingOnItsLookup() {
  const key = await t.issueKey()
  const url = `http://slow.test:${receiver.port}/in`
  const created = await t.api(key, 'POST', '/webhook_endpoints', { url, events: ['pet.created'] })
  expect(created.status).toBe(201)
  const endpoint = await created.json()
  let answer!: () => void
  const looking = new Promise<void>((resolve) => {
    held = { looking: resolve, answered: new Promise((answered) => (answer = answered)) }
  })
  expect((await t.api(key, 'POST', '/pets', { name: 'Rex', categoryId: 1 })).status).toBe(201)
  return { key, endpoint, answer, looking }
}
/**
 * The ownership read comes before the name's lookup: an attempt found its own just before a DELETE
 * commits may wait on DNS for seconds. It is asked again once the lookup took that long, so its POST
 * never reaches the receiver after the DELETE's 204 (CONTRACT §14: after it, no attempt starts).
 */
it("an attempt whose lookup outlasts a DELETE is not sent after the DELETE's 204", async () => {
  const { key, endpoint, answer, looking } = await attemptWaitingOnItsLookup()
  // The attempt was read as the dispatcher's own and now waits on the name.
  await looking
  expect((await t.api(key, 'DELETE', `/webhook_endpoints/${endpoint.id}`)).status).toBe(204)
  held = undefined
  answer()
  await t.server.dispatcher.whenIdle()
  expect(receiver.received).toHaveLength(0)
  const attempts = await t.deps.database.db
    .selectFrom('webhook_attempts')
    .select(['status', 'error'])
    .execute()
  expect(attempts).toEqual([{ status: 'failed', error: 'the endpoint was deleted' }])
})

it('an attempt whose lookup outlasts a PATCH of its URL goes to the new URL, looked up in turn', async () => {
  const { key, endpoint, answer, looking } = await attemptWaitingOnItsLookup()
  await looking
  const moved = `http://hooks.test:${receiver.port}/moved`
  expect((await t.api(key, 'PATCH', `/webhook_endpoints/${endpoint.id}`, { url: moved })).status).toBe(200)
  held = undefined
  answer()
  const [got] = await receiver.waitFor(1)
  await t.server.dispatcher.whenIdle()
  expect(receiver.received).toHaveLength(1)
  expect(got?.url).toBe('/moved')
})
