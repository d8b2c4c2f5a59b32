import { ConfigError, loadConfig } from './config.js'
import { type RunningServer, serveUntilSignalled } from './server.js'

/**
 * The one start-up of the service, for `npm start` (main.ts) and `petstore serve` (cli/main.ts): the
 * configuration from `env`, then the stores, the app and the listener (server.ts, which logs once which
 * database it serves), until SIGTERM or SIGINT. A failure is one line on stderr and exit code 1.
 * `onStarted` runs once it listens (demo.ts seeds there). What start-up warns about (a mistyped setting,
 * private webhook addresses allowed) is a plain line on stderr too, like the failures, before the log's lines.
 */
/**
 * Once serving is over (drained, stores closed, the demo's folder removed), how long a handle that
 * outlives it (an export still waiting on a collector that does not answer) may keep the process.
 */
const EXIT_GRACE_MS = 200

/**
 * Called by the process's entry once serving returned: the process exits EXIT_GRACE_MS later if anything
 * still holds it (unreferenced, the timer holds nothing itself). The drain budget is the promise.
 */
export function exitIfStillHeld(): void {
  setTimeout(() => process.exit(), EXIT_GRACE_MS).unref()
}

export async function serveFromEnvironment(
  env: NodeJS.ProcessEnv,
  writeError: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
  onStarted?: (server: RunningServer) => Promise<void>,
): Promise<number> {
  try {
    const config = loadConfig(env)
    for (const warning of config.warnings) writeError(`petstore: warning: ${warning}`)
    await serveUntilSignalled(config, onStarted)
    return 0
  } catch (error) {
    const reason = error instanceof ConfigError ? error.message : `cannot start: ${(error as Error).message}`
    writeError(`petstore: ${reason}`)
    return 1
  }
}
