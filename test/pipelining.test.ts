import { readdirSync, readFileSync } from 'node:fs'
import { connect } from 'node:net'
import { setTimeout as delay } from 'node:timers/promises'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { onServices, type ServedApp, serveTestApp } from './helpers.js'

/**
 * Pipelined requests from a client that never reads (a slow reader at its most extreme), on every path
 * that needs no key. The app listens in this process, so its file descriptors and memory are this
 * process's, read from /proc.
 */

let t: ServedApp
beforeAll(async () => {
  t = await serveTestApp({ env: { PETSTORE_PUBLIC_PER_MINUTE: '1000000' } })
})
afterAll(() => t.close())

const openFds = () => readdirSync('/proc/self/fd').length
const rssMB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) / 1024

const PIPELINED = 2_000
/** On PostgreSQL, /readyz's queries may open the pool's connections (PETSTORE_DB_POOL_SIZE, 10): sockets that stay pooled. */
const POOL = onServices ? 10 : 0

async function pipelineWithoutReading(path: string): Promise<{ during: number }> {
  const socket = connect(t.port, '127.0.0.1')
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.pause()
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`.repeat(PIPELINED))
  await delay(500)
  const during = openFds()
  socket.destroy()
  await delay(200)
  return { during }
}

test.each([
  '/v1/docs/static/swagger-ui-bundle.js',
  '/v1/docs/static/index.css',
  '/v1/docs/yaml',
  '/v1/docs/json',
  '/v1/docs',
  '/v1/openapi.json',
  '/healthz',
  '/readyz',
  '/metrics',
])(
  `${PIPELINED} pipelined GET %s that are never read hold no file descriptor and leave none`,
  async (path) => {
    const before = openFds()
    const { during } = await pipelineWithoutReading(path)
    expect(during - before, 'descriptors open while the requests queue').toBeLessThan(10 + POOL)
    expect(openFds() - before, 'descriptors left after the client went away').toBeLessThanOrEqual(1 + POOL)
  },
)

test('memory does not grow round after round of pipelined requests for the documents', async () => {
  const round = async () => {
    for (const path of ['/v1/docs/yaml', '/v1/docs/json', '/v1/openapi.json'])
      await pipelineWithoutReading(path)
  }
  // The first round grows the heap to what queued requests need; later rounds reuse it. V8 collects
  // lazily, so the bound leaves room for garbage: a response buffered per queued request (the YAML
  // document is tens of kilobytes) would grow it by hundreds of MB.
  await round()
  // Measured after a full collection: other suites running beside this one (test:services runs files in
  // parallel) make V8 put off collecting, and RSS then measures garbage, not what the requests kept.
  collectGarbage()
  const warm = rssMB()
  for (let i = 0; i < 4; i++) await round()
  collectGarbage()
  expect(rssMB() - warm).toBeLessThan(128)
})

/** A full collection in this process (`gc` exposed at run time, as `--expose-gc` would). */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc')
  ;(runInNewContext('gc') as () => void)()
}
