/**
 * The ceiling: a bare node:http server answering every request with the exact bytes of a 20-pet
 * listPets page. `tsx bench/ceiling.ts <body file>`; prints `listening <port>`.
 */
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'

const body = readFileSync(process.argv[2] ?? '')
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) }
const server = createServer((_request, response) => {
  response.writeHead(200, headers)
  response.end(body)
})
server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`)
})
process.once('SIGTERM', () => server.close(() => process.exit(0)))
