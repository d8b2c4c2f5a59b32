import { existsSync } from 'node:fs'
import { ConfigError, loadConfig } from '../config.js'
import { AppError } from '../errors.js'
import { type CliIo, processIo, UsageError } from './io.js'
import { KEYS_HELP, keysCommands } from './keys.js'
import { PETS_HELP, runPetsCommand } from './pets.js'

const HELP = `Usage: petstore <command> [options]

Commands:
  serve     Run the HTTP service (PORT, HOST, DATABASE_URL, ... from the environment or .env)
  migrate   Create or upgrade the database schema, then exit
  keys      Issue, list and revoke API keys (petstore keys --help)
  pets      List, create and fetch pets through the API (PETSTORE_URL, PETSTORE_API_KEY; petstore pets --help)

Every command reads its configuration from environment variables; see the README.`

const COMMAND_HELP: Record<string, string> = {
  serve:
    'Usage: petstore serve\n\nRuns the service until SIGTERM or SIGINT, then finishes in-flight requests and exits 0.',
  migrate:
    'Usage: petstore migrate\n\nBrings the database named by DATABASE_URL to the latest schema version.',
  keys: KEYS_HELP,
  pets: PETS_HELP,
}

/** Runs one command line; resolves to the process exit code. */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  const [command, ...rest] = argv
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    io.out(HELP)
    return command ? 0 : 2
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
  const config = loadConfig(io.env)
  // The server's modules load here, not on top: `pets` and `--help` start without them, in a tenth of the time.
  if (command === 'serve') {
    const { serveUntilSignalled } = await import('../server.js')
    await serveUntilSignalled(config)
    return 0
  }
  const [{ createDeps }, { default: pino }] = await Promise.all([import('../deps.js'), import('pino')])
  // Logs go to stderr so that stdout holds only the command's output (--json stays parseable).
  const deps = await createDeps(config, { logDestination: pino.destination(2) })
  try {
    if (command === 'migrate') {
      io.out('The database schema is up to date.')
      return 0
    }
    const [sub, ...subArgs] = args
    const run = sub === undefined ? undefined : keysCommands[sub]
    if (!run) throw new UsageError(`keys needs one of: ${Object.keys(keysCommands).join(', ')}`)
    await run(deps, subArgs, io)
    return 0
  } finally {
    await deps.close()
  }
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
