/**
 * The benchmark's webhook receiver, in a process of its own so that its work never slows the load
 * generator: `tsx bench/receiver.ts`; prints `listening <port>`. A POST to any path is a delivery (the path
 * names the endpoint): it is answered 204 as soon as its body is in, and recorded with the event's
 * `createdAt` and when it arrived. `GET /deliveries?from=N` gives the deliveries from the Nth on, `GET /count` how many came.
 * A POST to a path under `/hang/` is never answered (a partner's server that accepts and hangs).
 */
import { createServer } from 'node:http'

const deliveries: { endpoint: string; webhookId: string; createdAt: number; arrivedAt: number }[] = []

const server = createServer((request, response) => {
  if (request.method === 'GET') {
    const url = new URL(request.url ?? '/', 'http://receiver')
    const from = Number(url.searchParams.get('from') ?? 0)
    const body = url.pathname === '/count' ? { count: deliveries.length } : deliveries.slice(from)
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    return
  }
  if (request.url?.startsWith('/hang/')) return
  const arrivedAt = Date.now()
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    response.writeHead(204).end()
    const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { createdAt: string }
    const webhookId = String(request.headers['webhook-id'])
    deliveries.push({
      endpoint: request.url ?? '',
      webhookId,
      createdAt: Date.parse(event.createdAt),
      arrivedAt,
    })
  })
})
server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`)
})
process.once('SIGTERM', () => {
  server.closeAllConnections()
  server.close(() => process.exit(0))
})
