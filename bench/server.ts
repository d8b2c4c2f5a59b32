/**
 * A benchmark server in its own process: `tsx bench/server.ts <database file> [--no-limiter]`.
 * Prints `listening <port>` once ready. `--no-limiter` swaps the rate-limit store for one that admits
 * everything and counts nothing (its decisions still carry empty windows, so headers are written as
 * usual): the difference is what the store's bookkeeping costs.
 */
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { createDeps } from '../src/deps.js'
import type { Decision, RateLimitStore } from '../src/rate-limit/rate-limit.port.js'
import { windowStates } from '../src/rate-limit/windows.js'

const [databasePath, flag] = process.argv.slice(2)
const admitAll: RateLimitStore = {
  shared: false,
  consume: (_subject, limits, now): Decision => ({
    outcome: 'allowed',
    windows: windowStates(limits, { minute: 0, day: 0 }, now),
  }),
  peek: (_subject, limits, now): Decision => ({
    outcome: 'allowed',
    windows: windowStates(limits, { minute: 0, day: 0 }, now),
  }),
  reset: () => {},
  close: async () => {},
}

const config = loadConfig({ ...process.env, DATABASE_URL: `sqlite:${databasePath}`, PORT: '0' })
const deps = await createDeps(config, flag === '--no-limiter' ? { rateLimitStore: admitAll } : {})
const app = await buildApp(deps)
await app.listen({ port: 0, host: '127.0.0.1' })
const address = app.server.address()
process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`)
process.once('SIGTERM', async () => {
  await app.close()
  await deps.close()
  process.exit(0)
})
