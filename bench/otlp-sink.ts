/**
 * A local collector's stand-in for the tracing rows: takes OTLP/HTTP exports (`POST /v1/traces`), reads
 * every byte and answers 200 as a collector does, counting what it got. `tsx bench/otlp-sink.ts`; prints
 * `listening <port>`, and `exports <n> bytes <n>` on SIGTERM.
 */
import { createServer } from 'node:http'

let exports = 0
let bytes = 0
const server = createServer((request, response) => {
  request.on('data', (chunk: Buffer) => {
    bytes += chunk.length
  })
  request.on('end', () => {
    exports++
    response.writeHead(200, { 'content-type': request.headers['content-type'] ?? 'application/x-protobuf' })
    response.end()
  })
})
server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`)
})
process.once('SIGTERM', () => {
  process.stdout.write(`exports ${exports} bytes ${bytes}\n`)
  server.close(() => process.exit(0))
})
