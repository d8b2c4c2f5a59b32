import { describe, expect, it } from 'vitest'
import { loadConfig } from '../src/config.js'
import { createDeps, type Deps } from '../src/deps.js'
import { cliFixture, stderrLines } from './cli-fixture.js'
import { loopbackResolve } from './webhooks/harness.js'

const cli = cliFixture()

/** Runs `work` with the service's own code on the CLI's database. */
async function withDeps<T>(work: (deps: Deps) => Promise<T>): Promise<T> {
  const env = {
    DATABASE_URL: cli.state.databaseUrl,
    LOG_LEVEL: 'silent',
    PETSTORE_WEBHOOKS_ALLOW_PRIVATE: '1',
  }
  const deps = await createDeps(loadConfig(env), { resolve: loopbackResolve })
  try {
    return await work(deps)
  } finally {
    await deps.close()
  }
}

/** Two accounts' endpoints, made through the service's own code on the CLI's database. */
async function seedEndpoints() {
  const owner = await cli.createKey(['--plan', 'pro', '--create-db'])
  const other = await cli.createKey(['--plan', 'free'])
  return withDeps(async (deps) => {
    const first = await deps.webhookEndpoints.create(owner.id, {
      url: 'http://a.test/in',
      events: ['order.*'],
    })
    const second = await deps.webhookEndpoints.create(other.id, { url: 'http://b.test/in', events: ['*'] })
    return { owner, other, first, second }
  })
}

describe('petstore webhooks', () => {
  it("lists every account's endpoints, never a secret", async () => {
    const { owner, other, first, second } = await seedEndpoints()
    const listed = await cli.json<Array<Record<string, unknown>>>(['webhooks', 'list'])
    expect(listed).toMatchObject([
      { id: first.id, apiKeyId: owner.id, url: 'http://a.test/in', events: ['order.*'], status: 'enabled' },
      { id: second.id, apiKeyId: other.id, url: 'http://b.test/in', events: ['*'], status: 'enabled' },
    ])
    const table = await cli.petstore(['webhooks', 'list'])
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/^ID\s+KEY\s+STATUS\s+URL\s+EVENTS/)
    for (const output of [JSON.stringify(listed), table.stdout, table.stderr]) {
      expect(output).not.toContain(first.secret)
      expect(output).not.toContain('whsec_')
    }
  })

  it("shows a revoked or expired account's endpoints disabled with why, and a renewed key brings them back", async () => {
    const { owner, other } = await seedEndpoints()
    expect((await cli.petstore(['keys', 'revoke', String(other.id)])).code).toBe(0)
    // Expired: `keys update --expires` takes only a time to come, so the service's own code sets one past.
    const past = '2026-01-01T00:00:00.000Z'
    await withDeps((deps) => deps.apiKeys.updateApiKey(owner.id, { expiresAt: Date.parse(past) }))
    const listed = await cli.json<Array<Record<string, unknown>>>(['webhooks', 'list'])
    expect(listed).toMatchObject([
      { status: 'disabled', disabledReason: `the account's key expired on ${past}` },
      { status: 'disabled', disabledReason: "the account's key was revoked" },
    ])
    expect((await cli.petstore(['webhooks', 'list'])).stdout).toContain(
      "disabled (the account's key was revoked)",
    )
    expect((await cli.petstore(['keys', 'update', String(owner.id), '--expires', 'never'])).code).toBe(0)
    const renewed = await cli.json<Array<Record<string, unknown>>>(['webhooks', 'list'])
    expect(renewed[0]).toMatchObject({ status: 'enabled', disabledReason: null })
  })

  it('disables an endpoint of any account, and says why to its owner', async () => {
    const { first } = await seedEndpoints()
    const run = await cli.petstore(['webhooks', 'disable', first.id])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain(`Disabled ${first.id}`)
    const listed = await cli.json<Array<Record<string, unknown>>>(['webhooks', 'list'])
    expect(listed[0]).toMatchObject({ status: 'disabled', disabledReason: 'disabled by the operators' })
  })

  it.each([
    [['webhooks']],
    [['webhooks', 'disable']],
    [['webhooks', 'disable', 'x']],
    [['webhooks', 'disable', 'we_99']],
  ])('%j is a usage error: exit 2 and one line', async (args) => {
    await seedEndpoints()
    const run = await cli.petstore(args)
    expect(run.code).toBe(2)
    expect(stderrLines(run)).toHaveLength(1)
  })
})
