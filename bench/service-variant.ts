/**
 * The service as `npm start` runs it (the compiled build in dist/, the dispatcher on its thread, the
 * configuration from the environment), with one part swapped when `BENCH_EVENTS=off`: a recorder that
 * writes no event, so that a row can say what the event insert costs the writes (CONTRACT §14: one event
 * per committed change). Started by `startService` with `--import tsx` before this file; both variants
 * of a comparison start through it, so that they differ by the recorder alone. `BENCH_DIST` names
 * another build's dist/ (two builds compared in one run).
 */
import { pathToFileURL } from 'node:url'
import type { EventRecorder } from '../src/events/events.publisher.js'

type Config = typeof import('../src/config.js')
type Server = typeof import('../src/server.js')
const compiled = (module: string) => pathToFileURL(`${process.env.BENCH_DIST ?? 'dist'}/${module}`).href
const { loadConfig } = (await import(compiled('config.js'))) as Config
const { startServer } = (await import(compiled('server.js'))) as Server

const writesNothing: EventRecorder = { record: async () => {} }
const server = await startServer(loadConfig(process.env), {
  dispatcherThread: true,
  ...(process.env.BENCH_EVENTS === 'off' && { eventRecorder: writesNothing }),
})
process.once('SIGTERM', async () => {
  await server.close()
  process.exit(0)
})
