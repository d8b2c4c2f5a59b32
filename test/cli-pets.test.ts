import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createPetstoreClient, type NewPet, type Pet } from '../client/src/index.js'
import { type ServedApp, serveTestApp } from './client/served-app.js'
import { countPets } from './helpers.js'
import { type Run, runCli } from './service-process.js'

let t: ServedApp
let key: string
let dir: string

beforeEach(async () => {
  t = await serveTestApp()
  key = await t.issueKey()
  dir = mkdtempSync(join(tmpdir(), 'petstore-cli-pets-'))
})

afterEach(async () => {
  await t.close()
  rmSync(dir, { recursive: true, force: true })
})

/** `bin/petstore pets ...` in an empty folder, with the API's address and key and no DATABASE_URL. */
function pets(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return runCli(['pets', ...args], { PETSTORE_URL: t.baseUrl, PETSTORE_API_KEY: key, ...env }, dir)
}

async function seed(newPets: NewPet[]): Promise<Pet[]> {
  const client = createPetstoreClient({ baseUrl: t.baseUrl, apiKey: key })
  const created: Pet[] = []
  for (const newPet of newPets) created.push(await client.createPet(newPet))
  return created
}

function lines(text: string): string[] {
  return text.split('\n').filter(Boolean)
}

describe('pets create', () => {
  it('creates a pet and prints it as JSON, or as a sentence', async () => {
    const json = await pets([
      'create',
      '--name',
      'Rex',
      '--category-id',
      '1',
      '--status',
      'available',
      '--json',
    ])
    expect(json).toMatchObject({ code: 0, stderr: '' })
    expect(JSON.parse(json.stdout)).toEqual({ id: 1, name: 'Rex', categoryId: 1, status: 'available' })
    const text = await pets(['create', '--name', 'Tom', '--category-id', '7'])
    expect(text).toMatchObject({ code: 0, stderr: '', stdout: 'Created pet 2: Tom, category 7.\n' })
    expect(await countPets(t)).toBe(2)
    expect(readdirSync(dir)).toEqual([])
  })

  it('replays the first pet when run again with the same --idempotency-key', async () => {
    const args = ['create', '--name', 'Rex', '--category-id', '1', '--idempotency-key', 'shop-1', '--json']
    const first = await pets(args)
    const second = await pets(args)
    expect(second.stdout).toBe(first.stdout)
    expect(await countPets(t)).toBe(1)
  })
})

describe('pets list', () => {
  it('prints an aligned table and the command for the next page', async () => {
    const [rex, tom, kit] = await seed([
      { name: 'Rex', categoryId: 1, status: 'available' },
      { name: 'Tom Kitten', categoryId: 22 },
      { name: 'Kit', categoryId: 3, status: 'sold' },
    ])
    const first = await pets(['list', '--limit', '2'])
    expect(first).toMatchObject({ code: 0, stderr: '' })
    const [header, ...rows] = lines(first.stdout)
    expect(header).toMatch(/^ID +NAME +CATEGORY +STATUS$/)
    expect(rows.slice(0, 2).map((row) => row.split(/\s{2,}/))).toEqual([
      [String(rex?.id), 'Rex', '1', 'available'],
      [String(tom?.id), 'Tom Kitten', '22'],
    ])
    expect(rows[0]?.indexOf('available')).toBe(header?.indexOf('STATUS'))
    const next = /^Next page: petstore pets list --limit 2 --cursor (\S+)$/.exec(rows[2] ?? '')
    expect(next).not.toBeNull()
    const second = await pets(['list', '--limit', '2', '--cursor', next?.[1] ?? ''])
    expect(lines(second.stdout)).toEqual([expect.stringMatching(/^ID/), `${kit?.id}   Kit   3         sold`])
  })

  it('prints {pets, nextCursor} with --json, and every page with --all', async () => {
    const seeded = await seed([
      { name: 'A', categoryId: 1, status: 'sold' },
      { name: 'B', categoryId: 1, status: 'pending' },
      { name: 'C', categoryId: 1, status: 'sold' },
      { name: 'D', categoryId: 1, status: 'sold' },
    ])
    const page = await pets(['list', '--limit', '2', '--json'])
    expect(JSON.parse(page.stdout)).toEqual({ pets: seeded.slice(0, 2), nextCursor: expect.any(String) })
    const sold = await pets(['list', '--all', '--limit', '1', '--status', 'sold', '--json'])
    expect(sold).toMatchObject({ code: 0, stderr: '' })
    expect(JSON.parse(sold.stdout)).toEqual({ pets: seeded.filter((pet) => pet.status === 'sold') })
    expect((await pets(['list', '--status', 'available'])).stdout).toBe('No pets.\n')
  })
})

describe('pets list --id', () => {
  it('lists just those pets that exist, in id order, as a table or JSON: what replaces pets get', async () => {
    const [a, b, c] = await seed([
      { name: 'A', categoryId: 1, status: 'sold' },
      { name: 'B', categoryId: 2 },
      { name: 'C', categoryId: 3, status: 'sold' },
    ])
    const json = await pets(['list', '--id', `${c?.id},424242,${a?.id}`, '--json'])
    expect(json).toMatchObject({ code: 0, stderr: '' })
    expect(JSON.parse(json.stdout)).toEqual({ pets: [a, c] })
    const sold = await pets(['list', '--id', `${a?.id},${b?.id}`, '--status', 'sold', '--json'])
    expect(JSON.parse(sold.stdout)).toEqual({ pets: [a] })
    const table = await pets(['list', '--id', String(b?.id)])
    expect(lines(table.stdout)[1]?.split(/\s{2,}/)).toEqual([String(b?.id), 'B', '2'])
    expect((await pets(['list', '--id', '424242'])).stdout).toBe('No pets.\n')
  })

  it.each([
    [['list', '--id', '0'], '--id must be a whole number from 1 to 9007199254740991'],
    [['list', '--id', '1,x'], '--id must be a whole number from 1 to 9007199254740991'],
    [['list', '--id', '1', '--all'], '--id takes no --limit, --cursor or --all: it lists just those pets'],
  ])('%j is a usage error (exit 2)', async (args, message) => {
    const run = await pets(args)
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(message)
  })
})

describe('pets get', () => {
  it('prints the pet, and the deprecation warning once on stderr', async () => {
    const [rex] = await seed([{ name: 'Rex', categoryId: 1 }])
    const run = await pets(['get', String(rex?.id), '--json'])
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual(rex)
    expect(lines(run.stderr)).toEqual([
      'petstore: warning: getPet is deprecated and will be removed on 2030-12-05; use pets list --id ID (listPets with ?id=) instead',
    ])
  })
})

describe('failures', () => {
  it.each([
    ['not_found', ['get', '424242']],
    ['invalid_request', ['create', '--name', '   ', '--category-id', '1']],
    ['invalid_request', ['create', '--name', 'R'.repeat(101), '--category-id', '1']],
  ])('exits 1 with the service’s %s code, message and request id', async (code, args) => {
    const run = await pets(args)
    expect(run.code).toBe(1)
    expect(run.stdout).toBe('')
    const errors = lines(run.stderr).filter((line) => !line.includes('warning'))
    expect(errors).toEqual([
      expect.stringMatching(new RegExp(`^petstore: ${code}: .+ \\(request [\\w.:-]+\\)$`)),
    ])
  })

  it('exits 1 on a key the service refuses', async () => {
    const run = await pets(['list'], { PETSTORE_API_KEY: 'ps_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })
    expect(run.code).toBe(1)
    expect(lines(run.stderr)).toEqual([expect.stringMatching(/^petstore: unauthorized: /)])
  })

  it.each([
    ['no subcommand', [], {}],
    ['an unknown subcommand', ['feed'], {}],
    ['get without an id', ['get'], {}],
    ['get with a non-numeric id', ['get', 'rex'], {}],
    ['a non-numeric limit', ['list', '--limit', 'ten'], {}],
    ['a limit over 100', ['list', '--limit', '101'], {}],
    ['an unknown status', ['list', '--status', 'lost'], {}],
    ['--all with --cursor', ['list', '--all', '--cursor', 'abc'], {}],
    ['an unknown option', ['list', '--colour'], {}],
    ['create without --name', ['create', '--category-id', '1'], {}],
    ['create without --category-id', ['create', '--name', 'Rex'], {}],
    ['a non-numeric category', ['create', '--name', 'Rex', '--category-id', 'one'], {}],
    ['no PETSTORE_API_KEY', ['list'], { PETSTORE_API_KEY: '' }],
    ['a PETSTORE_URL without /v1', ['list'], { PETSTORE_URL: 'http://127.0.0.1:1' }],
    ['a PETSTORE_URL with a password', ['list'], { PETSTORE_URL: 'http://u:s3cret@127.0.0.1:1/v1' }],
  ])('exits 2 with one line on stderr for %s, and sends nothing', async (_case, args, env) => {
    const run = await pets(args, env)
    expect(run).toMatchObject({ code: 2, stdout: '' })
    expect(lines(run.stderr)).toEqual([expect.stringMatching(/^petstore: /)])
    const probe = createPetstoreClient({ baseUrl: t.baseUrl, apiKey: key })
    await probe.listPets()
    expect(probe.rateLimit.remaining, 'the key was used before the probe').toBe(1_000_000_000 - 1)
  })

  it('prints its usage with --help, without a key', async () => {
    const run = await runCli(['pets', '--help'], {}, dir)
    expect(run).toMatchObject({ code: 0, stderr: '' })
    expect(run.stdout).toMatch(/^Usage: petstore pets <command>/)
    expect(existsSync(join(dir, 'data'))).toBe(false)
  })
})
