import { connect } from 'node:net'

/** HTTP/1.1 on a raw socket: for requests no HTTP client would send. */

export interface RawResponse {
  status: number
  /** Header names lower-cased; repeated headers joined with ", ". */
  headers: Record<string, string>
  /** The body bytes as text, by Content-Length. */
  body: string
}

/**
 * Writes `chunks` to a new connection to 127.0.0.1:`port` and resolves with every byte received once
 * the server closes it (also when it resets the connection: a server may answer early, as with 413, and
 * close while the rest is still being written). It never half-closes: Node's server drops a request in
 * flight on a client FIN.
 */
export function sendRaw(port: number, ...chunks: (string | Buffer)[]): Promise<Buffer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      for (const chunk of chunks) socket.write(chunk)
    })
    const received: Buffer[] = []
    socket.on('data', (data) => received.push(data))
    socket.on('close', () => resolve(Buffer.concat(received)))
    socket.on('error', () => {}) // 'close' follows and resolves
  })
}

/** The first response in `bytes` (a HEAD response has no body whatever its Content-Length). */
export function parseResponse(bytes: Buffer, head = false): RawResponse {
  const [first] = parseResponses(bytes, [head])
  if (!first) throw new Error(`no complete response in ${JSON.stringify(bytes.toString('latin1'))}`)
  return first
}

/**
 * The responses to pipelined requests, in order, as many as are complete in `bytes` (a connection the
 * server closed early holds fewer than were sent). `heads[i]`: the i-th request was a HEAD.
 */
export function parseResponses(bytes: Buffer, heads: readonly boolean[]): RawResponse[] {
  const responses: RawResponse[] = []
  let rest = bytes
  for (const head of heads) {
    const response = parseOne(rest, head)
    if (!response) break
    responses.push(response.response)
    rest = rest.subarray(response.length)
  }
  return responses
}

function parseOne(bytes: Buffer, head: boolean): { response: RawResponse; length: number } | undefined {
  const end = bytes.indexOf('\r\n\r\n')
  if (end < 0) return undefined
  const [statusLine = '', ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    const name = line.slice(0, colon).toLowerCase()
    const value = line.slice(colon + 1).trim()
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value
  }
  const length = head ? 0 : Number(headers['content-length'] ?? 0)
  if (bytes.length < end + 4 + length) return undefined
  const body = bytes.subarray(end + 4, end + 4 + length).toString('utf8')
  return { response: { status: Number(statusLine.split(' ')[1]), headers, body }, length: end + 4 + length }
}
