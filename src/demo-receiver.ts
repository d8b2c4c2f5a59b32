import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { verifyWebhook } from '@petstore/client/verify-webhook'

export interface DemoReceiver {
  /** Where the demo's endpoint points: a loopback address (the demo allows private addresses). */
  url: string
  /** The endpoint's secret, once it is known: until then every delivery is refused (400). */
  useSecret(secret: string): void
  close(): Promise<void>
}

/**
 * The webhook receiver `npm run demo` runs beside the service, so that the dashboard's endpoint section has
 * deliveries to show: it verifies each delivery's signature with the endpoint's secret and answers 204,
 * or 400 when the signature does not verify, as a partner's receiver should.
 */
export async function startDemoReceiver(): Promise<DemoReceiver> {
  let secret: string | undefined
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      try {
        if (!secret) throw new Error('no secret yet')
        verifyWebhook(Buffer.concat(chunks), request.headers, secret)
        response.writeHead(204).end()
      } catch {
        response.writeHead(400).end()
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    useSecret: (value) => {
      secret = value
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
