import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../src/config.js'
import { type RunningServer, startServer } from '../src/server.js'
import { cliFixture, stderrLines } from './cli-fixture.js'

const KEY_PATTERN = /^ps_live_[A-Za-z0-9_-]{32}$/

const cli = cliFixture()
const { petstore, createKey, listKeys } = cli
let server: RunningServer | undefined

afterEach(async () => {
  await server?.close()
  server = undefined
})

function tableNames(db: Database.Database): string[] {
  return db.prepare("select name from sqlite_master where type = 'table'").pluck().all() as string[]
}

describe('keys create', () => {
  it('prints exactly one JSON line with the id, the key, the plan and the free limits', async () => {
    const run = await petstore(['keys', 'create', '--plan', 'free', '--json'])
    expect(run.code).toBe(0)
    expect(run.stderr).toBe(`${cli.databaseLine()}\n`)
    expect(run.stdout.endsWith('\n')).toBe(true)
    expect(run.stdout.trimEnd().split('\n')).toHaveLength(1)
    const created = JSON.parse(run.stdout)
    expect(Object.keys(created).sort()).toEqual(['expiresAt', 'id', 'key', 'limits', 'plan', 'scope'])
    expect(created).toEqual({
      id: expect.any(Number),
      key: expect.stringMatching(KEY_PATTERN),
      plan: 'free',
      limits: { perMinute: 60, perDay: 1000 },
      scope: 'write',
      expiresAt: null,
    })
  })

  it('issues ps_test_ keys in staging', async () => {
    const created = await createKey(['--plan', 'free'], { PETSTORE_ENV: 'staging' })
    expect(created.key).toMatch(/^ps_test_[A-Za-z0-9_-]{32}$/)
  })

  it.each([
    ['pro', 300, 10_000],
    ['business', 1000, 100_000],
  ])('gives %s keys their plan limits', async (plan, perMinute, perDay) => {
    const created = await createKey(['--plan', plan])
    expect(created).toMatchObject({ plan, limits: { perMinute, perDay } })
  })

  it('stores and prints the custom limits of an enterprise key', async () => {
    const created = await createKey(['--plan', 'enterprise', '--per-minute', '1000', '--per-day', '5'])
    expect(created).toMatchObject({ plan: 'enterprise', limits: { perMinute: 1000, perDay: 5 } })
    const [listed] = await listKeys()
    expect(listed).toMatchObject({ id: created.id, limits: { perMinute: 1000, perDay: 5 } })
  })

  it.each([
    ['an enterprise key without custom limits', ['--plan', 'enterprise']],
    ['an enterprise key with only one limit', ['--plan', 'enterprise', '--per-minute', '10']],
    ['custom limits on a free key', ['--plan', 'free', '--per-minute', '10']],
    ['an unknown plan', ['--plan', 'gold']],
    ['a missing plan', []],
  ])('refuses %s with exit code 2 and one line on stderr', async (_case, args) => {
    const run = await petstore(['keys', 'create', ...args, '--json'])
    expect(run.code).toBe(2)
    expect(run.stdout).toBe('')
    expect(stderrLines(run)).toEqual([expect.stringMatching(/^petstore: /)])
    expect(await listKeys()).toEqual([])
  })
})

describe('stored keys', () => {
  it('prints the key once and stores only its hash', async () => {
    const keys = [await createKey(['--plan', 'free', '--name', 'shop']), await createKey(['--plan', 'pro'])]
    const db = new Database(join(cli.state.dir, 'petstore.sqlite'), { readonly: true })
    try {
      const tables = tableNames(db)
      expect(tables).toContain('api_keys')
      const cells = tables.flatMap((table) =>
        (db.prepare(`select * from "${table}"`).raw().all() as unknown[][]).flat().map(String),
      )
      for (const { key } of keys) {
        const secret = key.slice('ps_live_'.length)
        expect(cells.filter((cell) => cell.includes(key) || cell.includes(secret))).toEqual([])
        const hash = createHash('sha256').update(key).digest('base64url')
        expect(db.prepare('select count(*) from api_keys where key_hash = ?').pluck().get(hash)).toBe(1)
      }
    } finally {
      db.close()
    }
    const files = readdirSync(cli.state.dir).map((file) =>
      readFileSync(join(cli.state.dir, file)).toString('latin1'),
    )
    for (const { key } of keys) expect(files.some((bytes) => bytes.includes(key))).toBe(false)
  })
})

describe('keys list', () => {
  it('shows id, prefix, name, plan, limits and times, never a key', async () => {
    const free = await createKey(['--plan', 'free', '--name', 'shop front'])
    const enterprise = await createKey(['--plan', 'enterprise', '--per-minute', '7', '--per-day', '70'])
    const listed = await listKeys()
    expect(listed).toEqual([
      {
        id: free.id,
        prefix: free.key.slice(0, 12),
        name: 'shop front',
        plan: 'free',
        limits: { perMinute: 60, perDay: 1000 },
        scope: 'write',
        expiresAt: null,
        lastUsedAt: null,
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        revokedAt: null,
        rotationPending: false,
      },
      {
        id: enterprise.id,
        prefix: enterprise.key.slice(0, 12),
        name: null,
        plan: 'enterprise',
        limits: { perMinute: 7, perDay: 70 },
        scope: 'write',
        expiresAt: null,
        lastUsedAt: null,
        createdAt: expect.any(String),
        revokedAt: null,
        rotationPending: false,
      },
    ])
    const table = await petstore(['keys', 'list'])
    expect(table.code).toBe(0)
    const [header, ...rows] = table.stdout.trimEnd().split('\n')
    expect(header).toMatch(
      /^ID +PREFIX +NAME +PLAN +PER MINUTE +PER DAY +SCOPE +EXPIRES +LAST USED +ROTATING +CREATED +REVOKED$/,
    )
    expect(rows[0]?.split(/\s{2,}/)).toEqual([
      String(free.id),
      `${free.key.slice(0, 12)}...`,
      'shop front',
      'free',
      '60',
      '1000',
      'write',
      listed[0]?.createdAt,
    ])
    expect(rows[1]).toContain(enterprise.key.slice(0, 12))
    for (const output of [table.stdout, JSON.stringify(listed)]) {
      for (const { key } of [free, enterprise]) expect(output).not.toContain(key)
    }
  })
})

describe('keys revoke', () => {
  it('sets revokedAt on the key', async () => {
    const created = await createKey(['--plan', 'free'])
    const run = await petstore(['keys', 'revoke', String(created.id)])
    expect(run).toMatchObject({ code: 0, stderr: `${cli.databaseLine()}\n` })
    expect(run.stdout).not.toContain(created.key)
    const [listed] = await listKeys()
    expect(listed?.revokedAt).toEqual(expect.stringMatching(/^\d{4}-.*Z$/))
    expect(Date.parse(String(listed?.revokedAt))).toBeGreaterThanOrEqual(
      Date.parse(String(listed?.createdAt)),
    )
    const table = await petstore(['keys', 'list'])
    expect(table.stdout).toContain(String(listed?.revokedAt))
  })

  it.each([
    ['an unknown id', ['999']],
    ['no id', []],
    ['an id that is not a number', ['abc']],
  ])('exits 2 for %s', async (_case, args) => {
    await createKey(['--plan', 'free'])
    const run = await petstore(['keys', 'revoke', ...args])
    expect(run.code).toBe(2)
    expect(stderrLines(run)).toHaveLength(1)
    expect((await listKeys())[0]?.revokedAt).toBeNull()
  })

  it('takes effect on the next request of a running server', async () => {
    server = await startServer(
      loadConfig({ PORT: '0', DATABASE_URL: cli.state.databaseUrl, LOG_LEVEL: 'silent' }),
    )
    const { port } = server.app.server.address() as AddressInfo
    const created = await createKey(['--plan', 'free'])
    const listPets = () =>
      fetch(`http://127.0.0.1:${port}/v1/pets`, { headers: { authorization: `Bearer ${created.key}` } })
    const before = await listPets()
    expect(before.status).toBe(200)
    expect(await before.json()).toEqual([])
    expect((await petstore(['keys', 'revoke', String(created.id)])).code).toBe(0)
    const after = await listPets()
    expect(after.status).toBe(401)
    expect(after.headers.get('www-authenticate')).toMatch(/^Bearer/)
    const body = await after.json()
    expect(body).toMatchObject({
      code: 'unauthorized',
      status: 401,
      message: expect.stringMatching(/revoked/),
    })
    expect(JSON.stringify(body)).not.toContain(created.key)
  })
})

describe('commands', () => {
  it.each([[['--help']], [['keys', '--help']], [['serve', '--help']], [['migrate', '--help']], [['help']]])(
    'prints usage for %j and exits 0',
    async (args) => {
      const run = await petstore(args)
      expect(run).toMatchObject({ code: 0, stderr: '' })
      expect(run.stdout).toMatch(/^Usage: petstore/)
      expect(existsSync(join(cli.state.dir, 'petstore.sqlite'))).toBe(false)
    },
  )

  it('exits 2 on an unknown command and on no command', async () => {
    const unknown = await petstore(['frobnicate'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('unknown command "frobnicate"')
    expect((await petstore([])).code).toBe(2)
    expect((await petstore(['keys', 'rotate'])).code).toBe(2)
  })

  it('migrate creates the database file and its schema in a folder that exists, and no folder', async () => {
    cli.state.databaseUrl = `sqlite:${join(cli.state.dir, 'nested', 'petstore.sqlite')}`
    const missing = await petstore(['migrate'])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toBe(
      `${cli.databaseLine()}\npetstore: failed: DATABASE_URL ${cli.state.databaseUrl}: no such directory\n`,
    )
    expect(existsSync(join(cli.state.dir, 'nested'))).toBe(false)
    mkdirSync(join(cli.state.dir, 'nested'))
    const run = await petstore(['migrate'])
    expect(run).toMatchObject({ code: 0, stderr: `${cli.databaseLine()}\n` })
    const db = new Database(join(cli.state.dir, 'nested', 'petstore.sqlite'), { readonly: true })
    const tables = tableNames(db)
    db.close()
    expect(tables).toEqual(expect.arrayContaining(['pets', 'api_keys', 'idempotency_keys']))
    expect((await petstore(['migrate'])).code).toBe(0)
  })
})
