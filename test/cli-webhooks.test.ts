import { describe, expect, it } from 'vitest'
import { loadConfig } from '../src/config.js'
import { createDeps } from '../src/deps.js'
import { cliFixture, stderrLines } from './cli-fixture.js'
import { loopbackResolve } from './webhooks/harness.js'

const cli = cliFixture()

/** Two accounts' endpoints, made through the service's own code on the CLI's database. */
async function seedEndpoints() {
  const owner = await cli.createKey(['--plan', 'pro', '--create-db'])
  const other = await cli.createKey(['--plan', 'free'])
  const env = {
    DATABASE_URL: cli.state.databaseUrl,
    LOG_LEVEL: 'silent',
    PETSTORE_WEBHOOKS_ALLOW_PRIVATE: '1',
  }
  const deps = await createDeps(loadConfig(env), { resolve: loopbackResolve })
  try {
    const first = await deps.webhookEndpoints.create(owner.id, {
      url: 'http://a.test/in',
      events: ['order.*'],
    })
    const second = await deps.webhookEndpoints.create(other.id, { url: 'http://b.test/in', events: ['*'] })
    return { owner, other, first, second }
  } finally {
    await deps.close()
  }
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
