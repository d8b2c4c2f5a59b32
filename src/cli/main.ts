import { existsSync } from 'node:fs'
import { systemClock } from '../clock.js'
import { ConfigError, loadConfig } from '../config.js'
import { describeDatabase } from '../db/describe.js'
import { sqliteOnNodeWarning } from '../db/node-support.js'
import { AppError } from '../errors.js'
import { VERSION } from '../version.js'
import { requireExistingDatabase } from './database.js'
import { type CliIo, processIo, UsageError } from './io.js'
import { KEYS_HELP, keysCommands } from './keys.js'
import { PETS_HELP, runPetsCommand } from './pets.js'
import { WEBHOOKS_HELP, webhooksCommands } from './webhooks.js'

const HELP = `Usage: petstore <command> [options]

Commands:
  serve     Run the HTTP service (PORT, HOST, DATABASE_URL, ... from the environment or .env);
            serve --demo: on a temporary database with pets, an order and a test key
  migrate   Create or upgrade the database schema, then exit
  keys      Issue, list and revoke API keys (petstore keys --help)
  pets      List, create and fetch pets through the API (PETSTORE_URL, PETSTORE_API_KEY; petstore pets --help)
  webhooks  List every account's webhook endpoints, or disable one (petstore webhooks --help)

Options:
  -h, --help       This text; petstore <command> --help tells of one command
  -V, --version    The version of petstore

Every command reads its configuration from environment variables; see the README. migrate and keys name
the database they use on stderr; serve names it in its log.`

const COMMAND_HELP: Record<string, string> = {
  serve: `Usage: petstore serve [--demo]

Runs the service until SIGTERM or SIGINT, then finishes in-flight requests and exits 0.

  --demo   On a fresh temporary database (removed when it stops), in staging, with 36 pets of every
           status, one open order and a test key; prints the docs address, the key and a curl command.`,
  migrate:
    'Usage: petstore migrate\n\nBrings the database named by DATABASE_URL to the latest schema version, creating it if need be.',
  keys: KEYS_HELP,
  pets: PETS_HELP,
  webhooks: WEBHOOKS_HELP,
}

/** `serve`'s options: true for --demo; anything else is a usage error. */
function parseServeLine(args: string[]): boolean {
  const unknown = args.find((arg) => arg !== '--demo')
  if (unknown !== undefined) throw new UsageError(`serve takes no "${unknown}": petstore serve [--demo]`)
  return args.length > 0
}

/** Runs one command line; resolves to the process exit code. */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  const [command, ...rest] = argv
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    io.out(HELP)
    return command ? 0 : 2
  }
  if (command === '--version' || command === '-V') {
    io.out(VERSION)
    return 0
  }
  const help = COMMAND_HELP[command]
  if (!help) {
    io.err(`petstore: unknown command "${command}"\n\n${HELP}`)
    return 2
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(help)
    return 0
  }
  try {
    if (io === processIo && existsSync('.env')) process.loadEnvFile('.env')
    // A client of the API: no configuration of the service, no database.
    if (command === 'pets') return await runPetsCommand(rest, io)
    return await runCommand(command, rest, io)
  } catch (error) {
    return reportFailure(error, io)
  }
}

async function runCommand(command: string, args: string[], io: CliIo): Promise<number> {
  // The server's modules load here, not on top: `pets` and `--help` start without them, in a tenth of the
  // time. `serve` is `npm start`'s start-up itself, which names its database in its log.
  if (command === 'serve') {
    const demo = parseServeLine(args)
    const { exitIfStillHeld, serveFromEnvironment } = await import('../start.js')
    const code = demo
      ? await (await import('../demo.js')).serveDemo(io.env, io.err)
      : await serveFromEnvironment(io.env, io.err)
    exitIfStillHeld()
    return code
  }
  // The command's arguments are read first: a usage error opens no database (nor creates, nor migrates one).
  const keys = command === 'keys' ? parseKeysLine(args) : undefined
  const webhooks = command === 'webhooks' ? parseWebhooksLine(args) : undefined
  const config = loadConfig(io.env)
  // serve and migrate may create the database; keys only one that was named, or when asked to.
  if ((keys && !keys.createDb) || webhooks) requireExistingDatabase(config.database, io.env)
  // On stderr, as the logs are, so that stdout holds only the command's output (--json stays parseable).
  io.err(`petstore: database ${describeDatabase(config.database)}`)
  const warning = config.database.kind === 'sqlite' ? sqliteOnNodeWarning() : undefined
  for (const line of [...config.warnings, ...(warning ? [warning] : [])]) io.err(`petstore: warning: ${line}`)
  const [{ createDeps }, { default: pino }] = await Promise.all([import('../deps.js'), import('pino')])
  const deps = await createDeps(config, { logDestination: pino.destination(2) })
  try {
    const run = keys?.run ?? webhooks?.run
    if (run) await run(deps, io)
    else io.out('The database schema is up to date.')
    return 0
  } finally {
    await deps.close()
  }
}

/** `keys <command> [options]`: the command and its own arguments; `--create-db` may stand anywhere. */
function parseKeysLine(args: string[]) {
  const [command, ...rest] = args.filter((arg) => arg !== '--create-db')
  const read = command === undefined ? undefined : keysCommands[command]
  if (!read) throw new UsageError(`keys needs one of: ${Object.keys(keysCommands).join(', ')}`)
  return { run: read(rest, systemClock.now()), createDb: args.includes('--create-db') }
}

/** `webhooks <command> [options]`. */
function parseWebhooksLine(args: string[]) {
  const [command, ...rest] = args
  const read = command === undefined ? undefined : webhooksCommands[command]
  if (!read) throw new UsageError(`webhooks needs one of: ${Object.keys(webhooksCommands).join(', ')}`)
  return { run: read(rest, systemClock.now()) }
}

function reportFailure(error: unknown, io: CliIo): number {
  const usage = error instanceof UsageError || error instanceof AppError || isParseArgsError(error)
  if (usage || error instanceof ConfigError) {
    io.err(`petstore: ${(error as Error).message}`)
    return usage ? 2 : 1
  }
  io.err(`petstore: failed: ${(error as Error).message}`)
  return 1
}

function isParseArgsError(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')
}
