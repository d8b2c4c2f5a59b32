import { type AddressInfo, createConnection, createServer, type Socket } from 'node:net'

/** What the proxy saw on one client connection. */
export interface ProxiedConnection {
  /** Dropped after the request went through, as the response began. */
  dropped: boolean
  /** Held: nothing forwarded, nothing answered. */
  held: boolean
  /** The request line (`GET /v1/pets`) of each request sent on it. */
  requests: string[]
  /** The Idempotency-Key header of each request sent on it. */
  idempotencyKeys: string[]
}

export interface FaultProxy {
  /** `http://127.0.0.1:<proxy port>/v1` */
  baseUrl: string
  connections: ProxiedConnection[]
  /** The next `count` connections forward their request, then close as the response begins. */
  dropResponses(count: number): void
  /** The next `count` connections are accepted and then never forwarded nor answered. */
  holdConnections(count: number): void
  close(): Promise<void>
}

const REQUEST_LINE = /^([A-Z]+ \S+) HTTP\/1\.1\r$/gm
const IDEMPOTENCY_KEY = /^idempotency-key:[ \t]*(.*?)[ \t]*\r$/gim

/**
 * A loopback TCP proxy in front of the service that loses responses on the way back: the request
 * reaches the service and is processed, the client sees the connection close. The fault a client
 * must survive without creating a pet twice.
 */
export async function startFaultProxy(targetPort: number): Promise<FaultProxy> {
  const connections: ProxiedConnection[] = []
  const sockets = new Set<Socket>()
  const budget = { drop: 0, hold: 0 }
  const server = createServer((client) => {
    const held = budget.hold > 0
    const connection: ProxiedConnection = { dropped: false, held, requests: [], idempotencyKeys: [] }
    connections.push(connection)
    sockets.add(client.on('error', () => {}).on('close', () => sockets.delete(client)))
    if (connection.held) {
      budget.hold--
      return
    }
    const drop = budget.drop > 0
    if (drop) budget.drop--
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort })
    sockets.add(upstream.on('error', () => {}).on('close', () => sockets.delete(upstream)))
    client.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1')
      for (const [, line = ''] of text.matchAll(REQUEST_LINE)) connection.requests.push(line)
      for (const [, key = ''] of text.matchAll(IDEMPOTENCY_KEY)) connection.idempotencyKeys.push(key)
      upstream.write(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      if (!drop) return void client.write(chunk)
      connection.dropped = true
      client.destroy()
      upstream.destroy()
    })
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    connections,
    dropResponses: (count) => {
      budget.drop = count
    },
    holdConnections: (count) => {
      budget.hold = count
    },
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
