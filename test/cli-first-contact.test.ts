import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { cliFixture, stderrLines } from './cli-fixture.js'
import { freePort, ROOT, runCli } from './service-process.js'

/** What a person meets first: the version, which database a command uses, and why the API is not reached. */
const cli = cliFixture()
const { petstore, databaseLine } = cli
let server: Server | undefined

afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)))
  server = undefined
})

/** `bin/petstore` in the test's empty folder with no DATABASE_URL at all: the default applies. */
const withoutDatabaseUrl = (args: string[], env: Record<string, string> = {}) =>
  runCli(args, env, cli.state.dir)

/** The default SQLite file as the CLI, in the test's folder, resolves it. */
const defaultFile = () => join(realpathSync(cli.state.dir), 'data', 'petstore.sqlite')

describe('--version', () => {
  it.each([['--version'], ['-V']])('%s prints the version of package.json and exits 0', async (flag) => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
    const run = await petstore([flag])
    expect(run).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' })
    expect(readdirSync(cli.state.dir)).toEqual([])
  })

  it('is in the help', async () => {
    expect((await petstore(['--help'])).stdout).toMatch(/^ {2}-V, --version +\S/m)
  })
})

describe('the database line on stderr', () => {
  it('names the database of keys create and keys list, never on stdout', async () => {
    const created = await petstore(['keys', 'create', '--plan', 'free', '--json'])
    expect(created).toMatchObject({ code: 0, stderr: `${databaseLine()}\n` })
    expect(JSON.parse(created.stdout)).toMatchObject({ plan: 'free' })
    const listed = await petstore(['keys', 'list'])
    expect(listed).toMatchObject({ code: 0, stderr: `${databaseLine()}\n` })
    expect(listed.stdout).not.toContain('database')
  })

  it('names the database of migrate', async () => {
    const run = await petstore(['migrate'])
    expect(run).toEqual({
      code: 0,
      stdout: 'The database schema is up to date.\n',
      stderr: `${databaseLine()}\n`,
    })
  })

  it('gives a relative SQLite path as an absolute one', async () => {
    mkdirSync(join(cli.state.dir, 'db'))
    const run = await petstore(['keys', 'list', '--json'], { DATABASE_URL: 'sqlite:./db/shop.sqlite' })
    expect(run.stderr).toBe(
      `petstore: database sqlite:${join(realpathSync(cli.state.dir), 'db', 'shop.sqlite')}\n`,
    )
    expect(JSON.parse(run.stdout)).toEqual([])
  })

  it.each([[['migrate']], [['serve']], [['keys', 'list']]])(
    'hides the password of a PostgreSQL URL (%j)',
    async (args) => {
      const port = await freePort()
      const url = `postgres://shop:s3cr3t@127.0.0.1:${port}/petstore?sslmode=disable&password=s3cr3t`
      const run = await petstore(args, { DATABASE_URL: url })
      expect(run.code).toBe(1)
      // serve is npm start's own start-up: it names the database in its log once it serves.
      expect(run.stderr.split('\n')[0]).toBe(
        args[0] === 'serve'
          ? `petstore: cannot start: DATABASE_URL postgres://shop:***@127.0.0.1:${port}/petstore?sslmode=disable&password=***: connection refused`
          : `petstore: database postgres://shop:***@127.0.0.1:${port}/petstore?sslmode=disable&password=***`,
      )
      expect(run.stdout + run.stderr).not.toContain('s3cr3t')
    },
  )
})

describe('keys without DATABASE_URL', () => {
  it.each([[['keys', 'create', '--plan', 'free', '--json']], [['keys', 'list']]])(
    '%j refuses with one line and exit 2 when the default file does not exist, creating nothing',
    async (args) => {
      const run = await withoutDatabaseUrl(args)
      expect(run).toMatchObject({ code: 2, stdout: '' })
      expect(run.stderr.split('\n').filter(Boolean)).toEqual([
        `petstore: no database at ${defaultFile()} (DATABASE_URL is not set): set DATABASE_URL to the service's database, or pass --create-db to create one there`,
      ])
      expect(readdirSync(cli.state.dir)).toEqual([])
    },
  )

  it('creates the default file with --create-db, and uses it from then on', async () => {
    const created = await withoutDatabaseUrl(['keys', 'create', '--create-db', '--plan', 'free', '--json'])
    expect(created).toMatchObject({ code: 0, stderr: `petstore: database sqlite:${defaultFile()}\n` })
    const { id } = JSON.parse(created.stdout)
    expect(existsSync(defaultFile())).toBe(true)
    const listed = await withoutDatabaseUrl(['keys', 'list', '--json'])
    expect(listed.code).toBe(0)
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ id })])
  })

  it('reads the arguments before the database: a usage error creates, opens and migrates none', async () => {
    for (const args of [
      ['keys', 'create', '--create-db', '--plan', 'gold'],
      ['keys', 'create', '--create-db', '--plan', 'free', '--expires', 'soon'],
      ['keys', 'update', '--create-db', '7'],
      ['keys', 'usage', '--create-db', '7', '--days', '0'],
      ['keys', 'revoke', '--create-db'],
    ]) {
      const run = await withoutDatabaseUrl(args)
      expect(run.code, args.join(' ')).toBe(2)
      expect(run.stderr, args.join(' ')).not.toContain('petstore: database')
      expect(existsSync(join(cli.state.dir, 'data')), args.join(' ')).toBe(false)
    }
  })

  it('creates the database that DATABASE_URL names, from the environment or from .env', async () => {
    const named = await withoutDatabaseUrl(['keys', 'create', '--plan', 'free'], {
      DATABASE_URL: 'sqlite:./named.sqlite',
    })
    expect(named.code).toBe(0)
    writeFileSync(join(cli.state.dir, '.env'), 'DATABASE_URL=sqlite:./from-dotenv.sqlite\n')
    const dotenv = await withoutDatabaseUrl(['keys', 'create', '--plan', 'free'])
    expect(dotenv.code).toBe(0)
    expect(readdirSync(cli.state.dir)).toEqual(expect.arrayContaining(['named.sqlite', 'from-dotenv.sqlite']))
    expect(existsSync(join(cli.state.dir, 'data'))).toBe(false)
  })

  it('lets migrate create the default file: creating is its job', async () => {
    const run = await withoutDatabaseUrl(['migrate'])
    expect(run).toMatchObject({ code: 0, stderr: `petstore: database sqlite:${defaultFile()}\n` })
    expect(existsSync(defaultFile())).toBe(true)
  })
})

describe('pets against an API that does not answer', () => {
  const pets = (baseUrl: string, args: string[]) =>
    runCli(['pets', ...args], { PETSTORE_URL: baseUrl, PETSTORE_API_KEY: 'ps_live_test' }, cli.state.dir)

  it('says it waits out a 429 for its Retry-After, then succeeds', async () => {
    const arrivals: number[] = []
    server = createServer((request, response) => {
      arrivals.push(Date.now())
      if (arrivals.length === 1) {
        response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' })
        response.end(JSON.stringify({ code: 'rate_limited', status: 429, message: 'Too many requests' }))
        return
      }
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(request.url?.startsWith('/v1/pets') ? '[]' : '{}')
    })
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    const run = await pets(`http://127.0.0.1:${port}/v1`, ['list'])
    expect(run).toMatchObject({ code: 0, stdout: 'No pets.\n' })
    expect(stderrLines(run)).toEqual([
      expect.stringMatching(/^petstore: rate limited; waiting 1\.\d s \(Retry-After: 1 s\) before retrying$/),
    ])
    expect(arrivals).toHaveLength(2)
    expect((arrivals[1] ?? 0) - (arrivals[0] ?? 0)).toBeGreaterThanOrEqual(1000)
  })

  it('names the URL and "connection refused" when nothing listens there', async () => {
    const baseUrl = `http://127.0.0.1:${await freePort()}/v1`
    const run = await pets(baseUrl, ['list'])
    expect(run).toMatchObject({ code: 1, stdout: '' })
    expect(stderrLines(run)).toEqual([
      `petstore: cannot reach ${baseUrl} (connection refused: is the service running and PETSTORE_URL right?)`,
    ])
  })
})
