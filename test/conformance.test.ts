import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { type ServedApp, serveTestApp } from './helpers.js'
import { freePort, killService, ROOT } from './service-process.js'

/**
 * Contract conformance judged by a tool nobody here wrote: a scenario covering every operation and
 * every status a conforming client can provoke, sent through Stoplight Prism's validating proxy
 * (`--errors`) in front of the real server, against the served /v1/openapi.json. Prism answers a request
 * violation itself (problem+json), flags a response violation (problem+json or `sl-violations`), and
 * logs both; the test counts all three and expects none.
 */

let t: ServedApp
let dir: string
let prism: ChildProcess
let prismLog = ''
let proxy: string

beforeAll(async () => {
  t = await serveTestApp()
  // The proxy stands in for the base address (ending in /v1): the scenario's paths are the spec's.
  const upstream = t.baseUrl
  dir = mkdtempSync(join(tmpdir(), 'petstore-prism-'))
  const spec = join(dir, 'openapi.json')
  writeFileSync(spec, await (await fetch(`${upstream}/openapi.json`)).text())
  const port = await freePort()
  proxy = `http://127.0.0.1:${port}`
  const bin = join(ROOT, 'node_modules', '@stoplight', 'prism-cli', 'dist', 'index.js')
  prism = spawn(
    process.execPath,
    [bin, 'proxy', spec, upstream, '--errors', '-h', '127.0.0.1', '-p', String(port)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      prismLog += chunk
      if (prismLog.includes('Prism is listening')) resolve()
    }
    prism.stdout?.on('data', onData)
    prism.stderr?.on('data', onData)
    prism.once('exit', (code) => reject(new Error(`prism exited ${code}: ${prismLog}`)))
  })
}, 60_000)

afterAll(async () => {
  if (prism) await killService({ child: prism })
  await t?.close()
  rmSync(dir, { recursive: true, force: true })
})

type Outcome = { operation: string; status: number; violation: string | undefined }
const outcomes: Outcome[] = []

async function send(operation: string, path: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(`${proxy}${path}`, init)
  const body = await response.clone().text()
  const fromPrism = (response.headers.get('content-type') ?? '').startsWith('application/problem+json')
  const flagged = response.headers.get('sl-violations')
  outcomes.push({ operation, status: response.status, violation: fromPrism ? body : (flagged ?? undefined) })
  return response
}

const json = (key: string, extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${key}`,
  'content-type': 'application/json',
  ...extra,
})

async function scenario(key: string, freeKey: string): Promise<void> {
  const auth = { authorization: `Bearer ${key}` }
  const pets = [
    { name: 'Rex', categoryId: 1 },
    { name: 'Tom', categoryId: 2, status: 'available' },
    { name: 'Kit', categoryId: Number.MAX_SAFE_INTEGER, status: 'pending' },
    { name: 'Max', categoryId: 4, status: 'sold' },
  ]
  for (const pet of pets)
    await send('createPet', '/pets', { method: 'POST', headers: json(key), body: JSON.stringify(pet) })
  const once = { method: 'POST', headers: json(key, { 'idempotency-key': 'conformance-1' }) }
  await send('createPet', '/pets', { ...once, body: JSON.stringify(pets[0]) })
  await send('createPet replay', '/pets', { ...once, body: JSON.stringify(pets[0]) })
  await send('createPet 422', '/pets', { ...once, body: JSON.stringify(pets[1]) })
  await send('listPets', '/pets', { headers: auth })
  for (const status of ['available', 'pending', 'sold'])
    await send('listPets', `/pets?status=${status}`, { headers: auth })
  let page = await send('listPets', '/pets?limit=2', { headers: auth })
  for (let link = page.headers.get('link'); link; link = page.headers.get('link')) {
    const cursor = new URL(/<([^>]+)>/.exec(link)?.[1] ?? '').searchParams.get('cursor')
    page = await send('listPets page', `/pets?limit=2&cursor=${cursor}`, { headers: auth })
  }
  await send('listPets 400', '/pets?cursor=not-a-cursor', { headers: auth })
  await send('getPet', '/pets/1', { headers: auth })
  await send('getPet 404', '/pets/999999', { headers: auth })
  await send('listPets 401', '/pets', { headers: { authorization: `Bearer ps_live_${'A'.repeat(32)}` } })
  await send('getPet 401', '/pets/1', { headers: { authorization: 'Bearer not-a-key' } })
  await send('getUsage', '/usage?days=3', { headers: auth })
  // A Free key past its 60 a minute: 429 rate_limited, then key_banned.
  for (let i = 0; i < 75; i++)
    await send('listPets (Free)', '/pets?limit=1', { headers: { authorization: `Bearer ${freeKey}` } })
}

test('the scenario through Prism’s validating proxy has zero request or response violations', async () => {
  await scenario(await t.issueKey(), await t.issueKey('free'))
  const violations = outcomes.filter((outcome) => outcome.violation !== undefined)
  expect(violations).toEqual([])
  expect(prismLog).not.toMatch(/violation|✖/i)
  const statuses = new Set(outcomes.map((outcome) => outcome.status))
  expect([...statuses].sort()).toEqual([200, 201, 400, 401, 404, 422, 429])
  expect(outcomes.some((o) => o.status === 429)).toBe(true)
  console.info(
    `prism: ${outcomes.length} requests, statuses ${[...statuses].sort().join(' ')}, violations ${violations.length}`,
  )
}, 60_000)

test('the detector is live: a request outside the schema is caught as a violation', async () => {
  const before = outcomes.length
  await send('control', '/pets?limit=0', { headers: { authorization: `Bearer ${await t.issueKey()}` } })
  expect(outcomes.slice(before)).toEqual([
    { operation: 'control', status: 422, violation: expect.stringContaining('limit') },
  ])
})
