import { existsSync } from 'node:fs'
import { ConfigError, loadConfig } from './config.js'
import { serveUntilSignalled } from './server.js'

/** Process entry: configuration → stores → app → listen; one line and exit 1 when start-up fails. */
async function main(): Promise<number> {
  try {
    if (existsSync('.env')) process.loadEnvFile('.env')
    await serveUntilSignalled(loadConfig(process.env))
    return 0
  } catch (error) {
    const reason = error instanceof ConfigError ? error.message : `cannot start: ${(error as Error).message}`
    process.stderr.write(`petstore: ${reason}\n`)
    return 1
  }
}

// The process entry of `npm start`; nothing imports this module (the CLI calls server.ts itself).
process.exitCode = await main()
