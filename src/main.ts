import { existsSync } from 'node:fs'
import { ConfigError, loadConfig } from './config.js'
import { serveUntilSignalled } from './server.js'

/** Process entry: configuration → stores → app → listen; one line and exit 1 when start-up fails. */
export async function main(): Promise<number> {
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

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = await main()
