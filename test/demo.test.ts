import { existsSync } from 'node:fs'
import { setTimeout as delay } from 'node:timers/promises'
import { afterEach, expect, test } from 'vitest'
import { killService, type Service, spawnService, waitForLine } from './service-process.js'

/** `petstore serve --demo` (CONTRACT §1), as a newcomer runs it: its printed curl line must just work. */

let demo: Service | undefined
afterEach(async () => {
  if (demo) await killService(demo)
})

test('serve --demo prints the docs, the dashboard, a test key and a curl line that answers 200 with seeded pets, an order and a delivered endpoint', async () => {
  demo = await spawnService({ LOG_LEVEL: 'warn' }, ['bin/petstore', 'serve', '--demo'])
  const [, key, url] = await waitForLine(demo, /try: curl -H "Authorization: Bearer (\S+)" "(\S+)"/)
  const docs = (await waitForLine(demo, /docs .*: (http\S+)/))[1] ?? ''
  expect(key).toMatch(/^ps_test_/)
  const auth = { authorization: `Bearer ${key}` }

  const page = await fetch(url ?? '', { headers: auth })
  expect(page.status).toBe(200)
  expect(await page.json()).toHaveLength(5)
  expect((await fetch(docs)).status).toBe(200)

  const base = docs.replace(/\/docs$/, '')
  const pets = (await (await fetch(`${base}/pets?limit=100`, { headers: auth })).json()) as {
    status?: string
  }[]
  expect(pets).toHaveLength(36)
  expect(new Set(pets.map((pet) => pet.status ?? 'none'))).toEqual(
    new Set(['available', 'pending', 'sold', 'none']),
  )
  const orders = (await (await fetch(`${base}/store/orders`, { headers: auth })).json()) as {
    status: string
  }[]
  expect(orders.map((order) => order.status)).toEqual(['placed'])

  // The dashboard's sections all have something to show: the endpoint's receiver runs in the demo.
  const dashboard = (await waitForLine(demo, /dashboard .*: (http\S+)/))[1] ?? ''
  expect(dashboard).toBe(base.replace(/\/v1$/, '/dashboard'))
  expect((await fetch(dashboard)).status).toBe(200)
  const endpoints = (await (await fetch(`${base}/webhook_endpoints`, { headers: auth })).json()) as {
    id: string
  }[]
  expect(endpoints).toHaveLength(1)
  let statuses: string[] = []
  for (let waited = 0; waited < 10_000 && !statuses.includes('succeeded'); waited += 200) {
    await delay(200)
    const log = await fetch(`${base}/webhook_endpoints/${endpoints[0]?.id}/deliveries`, { headers: auth })
    statuses = ((await log.json()) as { status: string }[]).map((attempt) => attempt.status)
  }
  expect(statuses).toContain('succeeded')
  expect(statuses).not.toContain('failed')
})

test('the demo database is a temporary file, gone once the service stops', async () => {
  demo = await spawnService({ LOG_LEVEL: 'info' }, ['bin/petstore', 'serve', '--demo'])
  await waitForLine(demo, /try: curl/)
  // The log (stdout) names the database once; it is flushed within a second.
  const path = (await waitForLine(demo, /"database":"sqlite:([^"]+)"/, demo.stdout))[1] ?? ''
  expect(path).toMatch(/petstore-demo-.*demo\.sqlite$/)
  expect(existsSync(path)).toBe(true)
  demo.child.kill('SIGTERM')
  expect(await demo.exited).toBe(0)
  expect(existsSync(path)).toBe(false)
})

test('serve takes no other option', async () => {
  demo = await spawnService({}, ['bin/petstore', 'serve', '--dmeo'])
  expect(await demo.exited).toBe(2)
  expect(demo.stderr()).toContain('serve takes no "--dmeo": petstore serve [--demo]')
})
