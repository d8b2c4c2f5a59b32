import { describe, expect, it } from 'vitest'
import { cliFixture, stderrLines } from './cli-fixture.js'

/** `petstore keys create/update/rotate/usage/list` as CONTRACT §10 gives them, on the built CLI. */
const { petstore, json, createKey, listKeys } = cliFixture()

type Described = Record<string, unknown> & { id: number }

describe('keys create --scope --expires', () => {
  it('stores the scope and an expiry given as a duration or an ISO instant', async () => {
    const before = Date.now()
    const read = await createKey(['--plan', 'free', '--scope', 'read', '--expires', '90d'])
    expect(read.scope).toBe('read')
    const expiresAt = Date.parse(read.expiresAt ?? '')
    expect(expiresAt - before).toBeGreaterThanOrEqual(90 * 86_400_000)
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(90 * 86_400_000)
    const instant = await createKey(['--plan', 'pro', '--expires', '2099-01-31T12:00:00+01:00'])
    expect(instant).toMatchObject({ scope: 'write', expiresAt: '2099-01-31T11:00:00.000Z' })
  })

  it.each([
    [['--scope', 'admin'], '--scope must be one of read, write'],
    [['--expires', 'tomorrow'], '--expires must be a duration like 90d or an ISO 8601 instant'],
    [['--expires', '2001-01-01T00:00:00Z'], '--expires must be in the future'],
    [['--expires', 'never'], '--expires must be a duration like 90d or an ISO 8601 instant'],
  ])('refuses %j with one line and exit 2, creating nothing', async (args, message) => {
    const run = await petstore(['keys', 'create', '--plan', 'free', ...args])
    expect(run.code).toBe(2)
    expect(stderrLines(run)).toEqual([expect.stringContaining(message)])
    expect(run.stdout).toBe('')
    expect(await listKeys()).toEqual([])
  })
})

describe('keys update', () => {
  it('changes plan, limits, name, scope and expiry, and clears the expiry with never', async () => {
    const { id } = await createKey(['--plan', 'free'])
    const updated = await json<Described>([
      'keys',
      'update',
      String(id),
      '--plan',
      'enterprise',
      '--per-minute',
      '5',
      '--per-day',
      '50',
      '--name',
      'partner',
      '--scope',
      'read',
      '--expires',
      '12h',
    ])
    expect(updated).toMatchObject({
      id,
      plan: 'enterprise',
      limits: { perMinute: 5, perDay: 50 },
      name: 'partner',
      scope: 'read',
    })
    expect(updated.expiresAt).toEqual(expect.any(String))
    const cleared = await json<Described>(['keys', 'update', String(id), '--expires', 'never'])
    expect(cleared).toMatchObject({ expiresAt: null, scope: 'read', plan: 'enterprise' })
    const text = await petstore(['keys', 'update', String(id), '--plan', 'pro'])
    expect(text.stdout).toContain(
      `Updated key ${id}: pro, 300 requests per minute, 10000 per day, read scope, no expiry.`,
    )
  })
})

describe('keys rotate', () => {
  it('prints a new secret for the same id once, and says until when the old one works', async () => {
    const created = await createKey(['--plan', 'pro', '--scope', 'read'])
    const rotated = await json<Described & { key: string }>([
      'keys',
      'rotate',
      String(created.id),
      '--grace',
      '1h',
    ])
    expect(Object.keys(rotated).sort()).toEqual(['expiresAt', 'id', 'key', 'limits', 'plan', 'scope'])
    expect(rotated).toMatchObject({ id: created.id, plan: 'pro', scope: 'read' })
    expect(rotated.key).not.toBe(created.key)
    const [listed] = await listKeys()
    expect(listed).toMatchObject({ id: created.id, prefix: rotated.key.slice(0, 12), rotationPending: true })
    const text = await petstore(['keys', 'rotate', String(created.id), '--grace', '0'])
    expect(text.code).toBe(0)
    expect(text.stdout).toContain('The old secret no longer works.')
    expect(text.stdout).toMatch(/ps_live_[A-Za-z0-9_-]{32}/)
  })
})

describe('mistakes in update and rotate', () => {
  it.each([
    [['update'], 'give the id of one key: petstore keys update ID'],
    [['update', '1'], 'give at least one of --plan'],
    [['update', '999', '--plan', 'pro'], 'there is no key with id 999'],
    [['update', '1', '--per-minute', '5'], 'custom limits are only for enterprise keys, not free'],
    [['update', '1', '--plan', 'gold'], '--plan must be one of free, pro, business, enterprise'],
    [['rotate', '1', '--grace', 'soon'], '--grace must be a duration like 90d, 12h, 30m or 0'],
    [['rotate', '7'], 'there is no key with id 7'],
  ])('refuses keys %j with one line and exit 2', async (args, message) => {
    await createKey(['--plan', 'free'])
    const run = await petstore(['keys', ...args])
    expect(run.code).toBe(2)
    expect(stderrLines(run)).toEqual([expect.stringContaining(message)])
  })
})

describe('keys usage', () => {
  it('prints every day asked for, with zeros for days without traffic', async () => {
    const { id } = await createKey(['--plan', 'free'])
    const usage = await json<{ id: number; days: Array<Record<string, unknown>> }>([
      'keys',
      'usage',
      String(id),
      '--days',
      '3',
    ])
    expect(usage.id).toBe(id)
    expect(usage.days).toHaveLength(3)
    expect(usage.days.at(-1)).toEqual({
      day: new Date().toISOString().slice(0, 10),
      '2xx': 0,
      '4xx': 0,
      '429': 0,
      '5xx': 0,
    })
    const table = await petstore(['keys', 'usage', String(id)])
    const [header, ...rows] = table.stdout.trimEnd().split('\n')
    expect(header).toMatch(/^DAY \(UTC\) +2xx +4xx +429 +5xx$/)
    expect(rows).toHaveLength(7)
    const refused = await petstore(['keys', 'usage', String(id), '--days', '0'])
    expect(refused.code).toBe(2)
    expect(stderrLines(refused)).toEqual(['petstore: --days must be a whole number from 1 to 366'])
  })
})
