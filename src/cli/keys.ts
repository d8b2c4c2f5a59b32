import { parseArgs } from 'node:util'
import { isPlan, isScope, PLANS, type Plan, SCOPES, type Scope } from '../api-keys/api-keys.plans.js'
import type { ApiKey } from '../api-keys/api-keys.repository.js'
import type { IssuedApiKey } from '../api-keys/api-keys.service.js'
import type { Deps } from '../deps.js'
import { parseInteger } from '../integer.js'
import { parseDuration, parseExpiry } from './durations.js'
import { type CliIo, type DatabaseCommand, formatTable, oneId, UsageError } from './io.js'
import { showUsage } from './keys-usage.js'

/** How long a rotated key's old secret keeps working unless `--grace` says otherwise. */
export const DEFAULT_ROTATION_GRACE = '24h'

export const KEYS_HELP = `Usage: petstore keys <command>

  keys create --plan free|pro|business|enterprise [--name TEXT] [--per-minute N --per-day N]
              [--scope read|write] [--expires WHEN] [--json]
      Issues a key and prints it once; only its hash is stored. Enterprise needs both custom limits.
      read keys may only GET; WHEN is a duration (90d, 12h) or an ISO 8601 instant.
  keys update ID [--plan P] [--per-minute N --per-day N] [--name TEXT] [--scope S] [--expires WHEN|never] [--json]
      Changes a key; every instance applies it from its next request. Counted requests stay counted.
  keys rotate ID [--grace DURATION] [--json]
      Prints a new secret for the key, once; the old one works until the grace ends (default ${DEFAULT_ROTATION_GRACE}, 0: at once).
  keys list [--json]
      Lists keys: id, prefix, name, plan, limits, scope, expiry, last use, pending rotation. Never a secret.
  keys usage ID [--days N] [--json]
      Requests per UTC day by status class (2xx, 4xx, 429, 5xx); lags the traffic by a few seconds.
  keys revoke ID [--json]
      Revokes a key; every instance refuses it from its next request on.

Every keys command opens the database of DATABASE_URL. When DATABASE_URL is not set, the default
./data/petstore.sqlite must exist already, or --create-db be given: no empty database appears by mistake.`

export const keysCommands: Record<string, DatabaseCommand> = {
  create: createKey,
  update: updateKey,
  rotate: rotateKey,
  list: listKeys,
  usage: showUsage,
  revoke: revokeKey,
}

const KEY_OPTIONS = {
  plan: { type: 'string' },
  name: { type: 'string' },
  'per-minute': { type: 'string' },
  'per-day': { type: 'string' },
  scope: { type: 'string' },
  expires: { type: 'string' },
  json: { type: 'boolean', default: false },
} as const

function createKey(args: string[], now: number) {
  const { values } = parseArgs({ args, options: KEY_OPTIONS })
  if (!values.plan || !isPlan(values.plan)) throw new UsageError(`--plan must be one of ${PLANS.join(', ')}`)
  const input = {
    plan: values.plan,
    name: parseName(values.name),
    perMinute: parseLimit('--per-minute', values['per-minute']),
    perDay: parseLimit('--per-day', values['per-day']),
    scope: parseScope(values.scope),
    expiresAt: values.expires === undefined ? null : parseExpiry(values.expires, now, false),
  }
  return async (deps: Deps, io: CliIo) => {
    printIssued(await deps.apiKeys.issueApiKey(input), values.json, io, 'Created')
  }
}

function updateKey(args: string[], now: number) {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: KEY_OPTIONS })
  const id = oneId(positionals, 'update')
  if (values.plan !== undefined && !isPlan(values.plan)) {
    throw new UsageError(`--plan must be one of ${PLANS.join(', ')}`)
  }
  const changes = {
    plan: values.plan as Plan | undefined,
    name: parseName(values.name),
    perMinute: parseLimit('--per-minute', values['per-minute']),
    perDay: parseLimit('--per-day', values['per-day']),
    scope: parseScope(values.scope),
    expiresAt: values.expires === undefined ? undefined : parseExpiry(values.expires, now, true),
  }
  if (Object.values(changes).every((value) => value === undefined)) {
    throw new UsageError('give at least one of --plan, --per-minute/--per-day, --name, --scope, --expires')
  }
  return async (deps: Deps, io: CliIo) => {
    const key = await deps.apiKeys.updateApiKey(id, changes)
    if (values.json) io.out(JSON.stringify(describeKey(key)))
    else io.out(`Updated key ${key.id}: ${summary(key)}. Every instance applies it from its next request.`)
  }
}

function rotateKey(args: string[]) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      grace: { type: 'string', default: DEFAULT_ROTATION_GRACE },
      json: { type: 'boolean', default: false },
    },
  })
  const id = oneId(positionals, 'rotate')
  const graceMs = parseDuration('--grace', values.grace)
  return async (deps: Deps, io: CliIo) => {
    printIssued(await deps.apiKeys.rotateApiKey(id, graceMs), values.json, io, 'Rotated')
    if (!values.json) {
      const until = new Date(deps.clock.now() + graceMs).toISOString()
      io.out(graceMs === 0 ? 'The old secret no longer works.' : `The old secret works until ${until}.`)
    }
  }
}

function listKeys(args: string[]) {
  const { values } = parseArgs({ args, options: { json: { type: 'boolean', default: false } } })
  return async (deps: Deps, io: CliIo) => {
    const keys = await deps.apiKeys.listApiKeys()
    if (values.json) {
      io.out(
        JSON.stringify(keys.map((key) => ({ ...describeKey(key), rotationPending: key.rotationPending }))),
      )
    } else {
      io.out(keysTable(keys))
    }
  }
}

function keysTable(keys: readonly (ApiKey & { rotationPending: boolean })[]): string {
  if (keys.length === 0) {
    return 'No keys yet: create one with `petstore keys create --plan free`.'
  }
  const rows = keys.map((key) => [
    String(key.id),
    `${key.prefix}...`,
    key.name ?? '',
    key.plan,
    String(key.limits.perMinute),
    String(key.limits.perDay),
    key.scope,
    time(key.expiresAt),
    minute(key.lastUsedAt),
    key.rotationPending ? 'yes' : '',
    time(key.createdAt),
    time(key.revokedAt),
  ])
  const header = ['ID', 'PREFIX', 'NAME', 'PLAN', 'PER MINUTE', 'PER DAY', 'SCOPE', 'EXPIRES', 'LAST USED']
  return formatTable([...header, 'ROTATING', 'CREATED', 'REVOKED'], rows)
}

function revokeKey(args: string[]) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false } },
  })
  const id = oneId(positionals, 'revoke')
  return async (deps: Deps, io: CliIo) => {
    const key = await deps.apiKeys.revokeApiKey(id)
    if (!key) throw new UsageError(`there is no key with id ${id}`)
    if (values.json) io.out(JSON.stringify(describeKey(key)))
    else io.out(`Revoked key ${key.id} (${key.prefix}...) at ${time(key.revokedAt)}.`)
  }
}

function printIssued({ apiKey, key }: IssuedApiKey, json: boolean, io: CliIo, verb: string): void {
  if (json) {
    const { id, plan, limits, scope } = apiKey
    io.out(JSON.stringify({ id, key, plan, limits, scope, expiresAt: isoOrNull(apiKey.expiresAt) }))
    return
  }
  io.out(`${verb} ${apiKey.plan} key ${apiKey.id}. Store it now: it is shown only this once.\n\n  ${key}\n`)
  io.out(`${summary(apiKey)}.`)
}

function summary(key: ApiKey): string {
  const limits = `${key.limits.perMinute} requests per minute, ${key.limits.perDay} per day`
  const expiry = key.expiresAt === null ? 'no expiry' : `expires ${time(key.expiresAt)}`
  return `${key.plan}, ${limits}, ${key.scope} scope, ${expiry}`
}

export function describeKey(key: ApiKey) {
  return {
    id: key.id,
    prefix: key.prefix,
    name: key.name,
    plan: key.plan,
    limits: key.limits,
    scope: key.scope,
    expiresAt: isoOrNull(key.expiresAt),
    lastUsedAt: key.lastUsedAt === null ? null : minute(key.lastUsedAt),
    createdAt: time(key.createdAt),
    revokedAt: isoOrNull(key.revokedAt),
  }
}

const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())
const time = (ms: number | null) => isoOrNull(ms) ?? ''
/** Last use to the minute: `2026-11-23T14:05Z`. */
const minute = (ms: number | null) => (ms === null ? '' : `${new Date(ms).toISOString().slice(0, 16)}Z`)

function parseName(name: string | undefined): string | undefined {
  if (name !== undefined && !/^[^\p{Cc}]{1,100}$/u.test(name)) {
    throw new UsageError('--name must be 1 to 100 characters without control characters')
  }
  return name
}

function parseScope(scope: string | undefined): Scope | undefined {
  if (scope === undefined || isScope(scope)) return scope
  throw new UsageError(`--scope must be one of ${SCOPES.join(', ')}`)
}

function parseLimit(option: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined
  const value = parseInteger(text)
  if (!(value >= 1)) throw new UsageError(`${option} must be a whole number of requests, at least 1`)
  return value
}
