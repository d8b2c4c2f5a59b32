import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { freePort, ROOT } from '../service-process.js'
import { startWebhookApp, type WebhookApp } from './harness.js'

/** The README's receiver, run as written, gets the service's deliveries and verifies them. */

let dir: string
let receiver: ChildProcess
let t: WebhookApp
let port: number
let key: string
let endpoint: { id: string; secret: string }
let stdout = ''

/** The first js block of the README's "Events and webhooks" section. */
function readmeReceiver(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('## Events and webhooks'))
  const code = /```js\n([\s\S]*?)```/.exec(section)?.[1]
  if (!code) throw new Error('no receiver in the README')
  return code
}

beforeAll(async () => {
  t = await startWebhookApp()
  // Inside the project, so that `import 'standardwebhooks'` resolves as it would after npm install.
  dir = mkdtempSync(join(ROOT, 'node_modules', '.readme-receiver-'))
  writeFileSync(join(dir, 'receiver.mjs'), readmeReceiver())
  port = await freePort()
  key = await t.issueKey()
  const url = `http://hooks.test:${port}/`
  endpoint = await (await t.api(key, 'POST', '/webhook_endpoints', { url, events: ['pet.*'] })).json()
  receiver = spawn(process.execPath, [join(dir, 'receiver.mjs')], {
    env: { PATH: process.env.PATH, WEBHOOK_SECRET: endpoint.secret, RECEIVER_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  receiver.stdout?.on('data', (chunk) => {
    stdout += chunk
  })
})
afterAll(async () => {
  receiver?.kill()
  await t?.close()
  rmSync(dir, { recursive: true, force: true })
})

const post = (headers: Record<string, string> = {}, body = '{}') =>
  fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers, body }).then(
    (response) => response.status,
    () => 0,
  )

it('acts on each event once, in resourceVersion order, and answers 2xx', async () => {
  await expect.poll(() => post(), { timeout: 10_000 }).toBe(400)
  const pet = await (await t.api(key, 'POST', '/pets', { name: 'Rex', categoryId: 1 })).json()
  const lines = () => stdout.split('\n').filter(Boolean).length
  // Deliveries are not ordered: the change comes after the creation was seen, so neither is stale.
  await expect.poll(lines, { timeout: 5_000 }).toBe(1)
  await t.api(key, 'PATCH', `/pets/${pet.id}`, { status: 'sold' })
  await expect.poll(lines, { timeout: 5_000 }).toBe(2)
  // A redelivery of the first event is a duplicate the receiver drops, and still answers 204.
  const [created] = await (await t.api(key, 'GET', '/events?type=pet.created')).json()
  expect((await t.api(key, 'POST', `/events/${created.id}/redeliver`)).status).toBe(202)
  const log = async () => (await t.api(key, 'GET', `/webhook_endpoints/${endpoint.id}/deliveries`)).json()
  const statuses = async () => (await log()).map((attempt: { httpStatus: number }) => attempt.httpStatus)
  await expect.poll(statuses).toEqual([204, 204, 204])
  expect(stdout.split('\n').filter(Boolean)).toEqual([
    `pet.created {"id":${pet.id},"name":"Rex","categoryId":1}`,
    `pet.updated {"id":${pet.id},"name":"Rex","categoryId":1,"status":"sold"}`,
  ])
})

it('answers a test event, every time', async () => {
  for (let i = 0; i < 2; i++) {
    expect((await t.api(key, 'POST', `/webhook_endpoints/${endpoint.id}/test`)).status).toBe(202)
  }
  const pings = () => stdout.split('\n').filter((line) => line.startsWith('ping '))
  await expect.poll(pings, { timeout: 10_000 }).toEqual([`ping ${endpoint.id}`, `ping ${endpoint.id}`])
})

it('refuses a delivery that was not signed with its secret', async () => {
  const headers = {
    'webhook-id': 'evt_1',
    'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
    'webhook-signature': 'v1,AAAA',
  }
  expect(await post(headers, '{"type":"pet.deleted"}')).toBe(400)
})
