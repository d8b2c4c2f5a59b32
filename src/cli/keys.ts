import { parseArgs } from 'node:util'
import { isPlan, PLANS } from '../api-keys/api-keys.plans.js'
import type { ApiKey } from '../api-keys/api-keys.repository.js'
import type { Deps } from '../deps.js'
import { parseInteger } from '../integer.js'
import { type CliIo, formatTable, UsageError } from './io.js'

export const KEYS_HELP = `Usage: petstore keys <command>

  keys create --plan free|pro|business|enterprise [--name TEXT] [--per-minute N --per-day N] [--json]
      Issues a key and prints it once; only its hash is stored. Enterprise needs both custom limits.
  keys list [--json]
      Lists keys: id, prefix, name, plan, limits, created and revoked times. Never the key itself.
  keys revoke ID [--json]
      Revokes a key; every instance refuses it from its next request on.`

type KeysCommand = (deps: Deps, args: string[], io: CliIo) => Promise<void>

export const keysCommands: Record<string, KeysCommand> = {
  create: createKey,
  list: listKeys,
  revoke: revokeKey,
}

async function createKey(deps: Deps, args: string[], io: CliIo): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      plan: { type: 'string' },
      name: { type: 'string' },
      'per-minute': { type: 'string' },
      'per-day': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  })
  if (!values.plan || !isPlan(values.plan)) throw new UsageError(`--plan must be one of ${PLANS.join(', ')}`)
  if (values.name !== undefined && !/^[^\p{Cc}]{1,100}$/u.test(values.name)) {
    throw new UsageError('--name must be 1 to 100 characters without control characters')
  }
  const { apiKey, key } = await deps.apiKeys.issueApiKey({
    plan: values.plan,
    name: values.name,
    perMinute: parseLimit('--per-minute', values['per-minute']),
    perDay: parseLimit('--per-day', values['per-day']),
  })
  if (values.json) {
    io.out(JSON.stringify({ id: apiKey.id, key, plan: apiKey.plan, limits: apiKey.limits }))
    return
  }
  io.out(`Created ${apiKey.plan} key ${apiKey.id}. Store it now: it is shown only this once.\n\n  ${key}\n`)
  io.out(`Limits: ${apiKey.limits.perMinute} requests per minute, ${apiKey.limits.perDay} per day.`)
}

async function listKeys(deps: Deps, args: string[], io: CliIo): Promise<void> {
  const { values } = parseArgs({ args, options: { json: { type: 'boolean', default: false } } })
  const keys = await deps.apiKeys.listApiKeys()
  if (values.json) {
    io.out(JSON.stringify(keys.map(describeKey)))
    return
  }
  if (keys.length === 0) {
    io.out('No keys yet: create one with `petstore keys create --plan free`.')
    return
  }
  const rows = keys.map((key) => [
    String(key.id),
    `${key.prefix}...`,
    key.name ?? '',
    key.plan,
    String(key.limits.perMinute),
    String(key.limits.perDay),
    new Date(key.createdAt).toISOString(),
    key.revokedAt === null ? '' : new Date(key.revokedAt).toISOString(),
  ])
  io.out(formatTable(['ID', 'PREFIX', 'NAME', 'PLAN', 'PER MINUTE', 'PER DAY', 'CREATED', 'REVOKED'], rows))
}

async function revokeKey(deps: Deps, args: string[], io: CliIo): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false } },
  })
  const id = positionals.length === 1 ? parseInteger(positionals[0] ?? '') : Number.NaN
  if (!Number.isSafeInteger(id)) throw new UsageError('give the id of one key: petstore keys revoke ID')
  const key = await deps.apiKeys.revokeApiKey(id)
  if (!key) throw new UsageError(`there is no key with id ${id}`)
  if (values.json) io.out(JSON.stringify(describeKey(key)))
  else io.out(`Revoked key ${key.id} (${key.prefix}...) at ${new Date(key.revokedAt ?? 0).toISOString()}.`)
}

function describeKey(key: ApiKey) {
  return {
    id: key.id,
    prefix: key.prefix,
    name: key.name,
    plan: key.plan,
    limits: key.limits,
    createdAt: new Date(key.createdAt).toISOString(),
    revokedAt: key.revokedAt === null ? null : new Date(key.revokedAt).toISOString(),
  }
}

function parseLimit(option: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined
  const value = parseInteger(text)
  if (!(value >= 1)) throw new UsageError(`${option} must be a whole number of requests, at least 1`)
  return value
}
