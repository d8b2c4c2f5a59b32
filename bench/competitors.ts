import { writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { type ServerProcess, startProcess } from './lib.js'

/** A port that was free a moment ago, for servers that cannot listen on port 0 and say which. */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return typeof address === 'object' && address ? address.port : 0
}

/** json-server (what a user picks for a quick REST API) over the same pets, from a JSON file. */
export async function startJsonServer(dir: string, count: number): Promise<ServerProcess> {
  const statuses = ['available', 'pending', 'sold', undefined]
  const pets = Array.from({ length: count }, (_, i) => ({
    id: i + 1,
    name: `Pet ${i + 1}`,
    categoryId: ((i + 1) % 50) + 1,
    ...(statuses[(i + 1) % 4] && { status: statuses[(i + 1) % 4] }),
  }))
  const file = join(dir, 'json-server-db.json')
  writeFileSync(file, JSON.stringify({ pets }))
  const port = await freePort()
  const bin = join('node_modules', 'json-server', 'lib', 'cli', 'bin.js')
  // json-server prints nothing useful when quiet: it is ready once it answers.
  const server = await startProcess(
    process.execPath,
    [bin, '--quiet', '--port', String(port), '--host', '127.0.0.1', file],
    () => port,
  )
  await waitForHttp(port, '/pets?_limit=1')
  return server
}

/** Stoplight Prism (what a user picks to serve a spec) mocking our own OpenAPI document. */
export async function startPrism(dir: string, openapi: string): Promise<ServerProcess> {
  const file = join(dir, 'openapi.json')
  writeFileSync(file, openapi)
  const port = await freePort()
  const bin = join('node_modules', '@stoplight', 'prism-cli', 'dist', 'index.js')
  return startProcess(
    process.execPath,
    [bin, 'mock', file, '--host', '127.0.0.1', '--port', String(port), '--errors', 'false'],
    (out) => (/listening on/i.test(out) ? port : undefined),
  )
}

async function waitForHttp(port: number, path: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}${path}`)).ok) return
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`nothing answered on port ${port}`)
}
