import { parseArgs } from 'node:util'
import {
  createPetstoreClient,
  type Pet,
  type PetStatus,
  type PetstoreClient,
  PetstoreError,
} from '@petstore/client'
import { parseInteger } from '../integer.js'
import { type CliIo, formatTable, UsageError } from './io.js'
import { describeNetworkError } from './network-errors.js'

export const DEFAULT_URL = 'http://127.0.0.1:8080/v1'
const STATUSES: readonly PetStatus[] = ['available', 'pending', 'sold']

export const PETS_HELP = `Usage: petstore pets <command>

Calls the API at PETSTORE_URL (default ${DEFAULT_URL}) with the key in PETSTORE_API_KEY, through
@petstore/client: 429s are waited out (saying so on stderr), network errors retried. No database is needed.

  pets list [--status available|pending|sold] [--limit N] [--cursor C | --all] [--json]
      One page of pets in id order, and the command for the next page; --all walks every page.
      --json prints {"pets": [...], "nextCursor": "..."}.
  pets list --id ID[,ID...] [--status S] [--json]
      Those of the pets (1 to 100 ids) that exist, in id order: what replaces pets get.
  pets create --name NAME --category-id N [--status S] [--idempotency-key K] [--json]
      Adds a pet. Its retries reuse one Idempotency-Key, so at most one pet is created.
  pets get ID [--json]
      Fetches one pet. The service deprecates this: use pets list --id ID.`

type PetsCommand = (client: PetstoreClient, args: string[], io: CliIo) => Promise<void>

const petsCommands: Record<string, PetsCommand> = { list: listPets, create: createPet, get: getPet }

/**
 * Runs `petstore pets ...`; resolves to the exit code: 1 with the service's code and message when the
 * API refuses. Usage mistakes throw UsageError (exit 2).
 */
export async function runPetsCommand(args: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args
  const run = sub === undefined ? undefined : petsCommands[sub]
  if (!run) throw new UsageError(`pets needs one of: ${Object.keys(petsCommands).join(', ')}`)
  const { baseUrl, apiKey } = apiFromEnv(io)
  try {
    await run(createCliClient(baseUrl, apiKey, io), rest, io)
    return 0
  } catch (error) {
    if (!(error instanceof PetstoreError)) throw error
    if (error.code === 'network_error') {
      io.err(`petstore: cannot reach ${baseUrl} (${describeNetworkError(error)})`)
      return 1
    }
    const request = error.requestId ? ` (request ${error.requestId})` : ''
    io.err(`petstore: ${error.code}: ${error.message}${request}`)
    return 1
  }
}

function apiFromEnv(io: CliIo): { baseUrl: string; apiKey: string } {
  const baseUrl = io.env.PETSTORE_URL || DEFAULT_URL
  const apiKey = io.env.PETSTORE_API_KEY
  if (!apiKey) throw new UsageError('set PETSTORE_API_KEY to an API key (petstore keys create)')
  if (!/^https?:\/\/.+\/v1\/?$/.test(baseUrl) || !URL.canParse(baseUrl)) {
    throw new UsageError(`PETSTORE_URL must be an http(s) address ending in /v1, like ${DEFAULT_URL}`)
  }
  const { username, password } = new URL(baseUrl)
  if (username || password) {
    throw new UsageError(
      'PETSTORE_URL must not carry a user name or password: the API key goes in PETSTORE_API_KEY',
    )
  }
  return { baseUrl, apiKey }
}

/** The client, telling the person at the terminal about deprecations and about every rate-limit wait. */
function createCliClient(baseUrl: string, apiKey: string, io: CliIo): PetstoreClient {
  return createPetstoreClient({
    baseUrl,
    apiKey,
    // The client's advice names its own method; at the terminal, the command that does the same.
    onWarning: (warning) =>
      io.err(`petstore: warning: ${warning.message.replace('getPets([id])', 'pets list --id ID')}`),
    onRetry: ({ error, delayMs }) => {
      if (error.code !== 'rate_limited') return
      const asked =
        error.rateLimit.retryAfter === undefined ? '' : ` (Retry-After: ${error.rateLimit.retryAfter} s)`
      io.err(`petstore: rate limited; waiting ${seconds(delayMs)} s${asked} before retrying`)
    },
  })
}

/** `1.3` under ten seconds, whole seconds above. */
function seconds(ms: number): string {
  return ms < 10_000 ? (ms / 1000).toFixed(1) : String(Math.round(ms / 1000))
}

async function listPets(client: PetstoreClient, args: string[], io: CliIo): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      id: { type: 'string' },
      status: { type: 'string' },
      limit: { type: 'string' },
      cursor: { type: 'string' },
      all: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  })
  const status = parseStatus(values.status)
  if (values.id !== undefined) {
    if (values.all || values.cursor !== undefined || values.limit !== undefined) {
      throw new UsageError('--id takes no --limit, --cursor or --all: it lists just those pets')
    }
    return listPetsByIds(client, parseIds(values.id), status, values.json, io)
  }
  const limit = values.limit === undefined ? undefined : parseWholeNumber('--limit', values.limit, 100)
  if (values.all && values.cursor !== undefined) throw new UsageError('give either --all or --cursor')
  const page = values.all
    ? { pets: await collect(client.pets.all({ status, limit })) }
    : await client.listPets({ status, limit, cursor: values.cursor })
  if (values.json) {
    io.out(JSON.stringify(page))
    return
  }
  io.out(page.pets.length === 0 ? 'No pets.' : petTable(page.pets))
  if ('nextCursor' in page && page.nextCursor !== undefined) {
    const filters = [
      limit === undefined ? '' : ` --limit ${limit}`,
      status === undefined ? '' : ` --status ${status}`,
    ]
    io.out(`\nNext page: petstore pets list${filters.join('')} --cursor ${page.nextCursor}`)
  }
}

/** `pets list --id`: getPet's replacement, through the client's getPets. */
async function listPetsByIds(
  client: PetstoreClient,
  ids: number[],
  status: PetStatus | undefined,
  json: boolean,
  io: CliIo,
): Promise<void> {
  const pets = await client.getPets(ids, { status })
  if (json) io.out(JSON.stringify({ pets }))
  else io.out(pets.length === 0 ? 'No pets.' : petTable(pets))
}

async function createPet(client: PetstoreClient, args: string[], io: CliIo): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      name: { type: 'string' },
      'category-id': { type: 'string' },
      status: { type: 'string' },
      'idempotency-key': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  })
  if (values.name === undefined) throw new UsageError('pets create needs --name NAME')
  if (values['category-id'] === undefined) throw new UsageError('pets create needs --category-id N')
  const categoryId = parseWholeNumber('--category-id', values['category-id'], Number.MAX_SAFE_INTEGER)
  const status = parseStatus(values.status)
  const newPet =
    status === undefined ? { name: values.name, categoryId } : { name: values.name, categoryId, status }
  const pet = await client.createPet(newPet, { idempotencyKey: values['idempotency-key'] })
  if (values.json) io.out(JSON.stringify(pet))
  else
    io.out(
      `Created pet ${pet.id}: ${pet.name}, category ${pet.categoryId}${pet.status ? `, ${pet.status}` : ''}.`,
    )
}

async function getPet(client: PetstoreClient, args: string[], io: CliIo): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false } },
  })
  if (positionals.length !== 1) throw new UsageError('give the id of one pet: petstore pets get ID')
  const id = parseWholeNumber('ID', positionals[0] ?? '', Number.MAX_SAFE_INTEGER)
  const pet = await client.getPet(id)
  io.out(values.json ? JSON.stringify(pet) : petTable([pet]))
}

function petTable(pets: Pet[]): string {
  const rows = pets.map((pet) => [String(pet.id), pet.name, String(pet.categoryId), pet.status ?? ''])
  return formatTable(['ID', 'NAME', 'CATEGORY', 'STATUS'], rows)
}

async function collect(pets: AsyncIterable<Pet>): Promise<Pet[]> {
  const all: Pet[] = []
  for await (const pet of pets) all.push(pet)
  return all
}

/** `--id 1,2,3`: 1 to 100 whole numbers from 1, comma-separated. */
function parseIds(text: string): number[] {
  const ids = text.split(',').map((part) => parseWholeNumber('--id', part, Number.MAX_SAFE_INTEGER))
  if (ids.length > 100) throw new UsageError('--id takes at most 100 ids')
  return ids
}

function parseStatus(text: string | undefined): PetStatus | undefined {
  if (text === undefined) return undefined
  const status = STATUSES.find((candidate) => candidate === text)
  if (!status) throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`)
  return status
}

function parseWholeNumber(option: string, text: string, max: number): number {
  const value = parseInteger(text)
  if (!(value >= 1 && value <= max)) throw new UsageError(`${option} must be a whole number from 1 to ${max}`)
  return value
}
