import { causeChain } from '../error-causes.js'

/** Why a request got no response, by the code Node.js or undici puts on the error, as a person would say it. */
const REASONS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused: is the service running and PETSTORE_URL right?',
  ENOTFOUND: 'host not found: check the host name in PETSTORE_URL',
  EAI_AGAIN: 'host name lookup failed: check the network and the host name in PETSTORE_URL',
  ETIMEDOUT: 'timed out: is the host reachable and the port open?',
  UND_ERR_CONNECT_TIMEOUT: 'timed out connecting: is the host reachable and the port open?',
  UND_ERR_HEADERS_TIMEOUT: 'timed out waiting for the response',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ECONNRESET: 'connection reset by the server or a proxy',
  ERR_SSL_WRONG_VERSION_NUMBER: 'TLS handshake failed: does the service speak https at that address?',
}

const CERTIFICATE_CODE = /CERT|SELF_SIGNED|UNABLE_TO_(VERIFY|GET_ISSUER)/

/**
 * The likely cause of a network error, from the first code in its chain of causes: fetch throws
 * `TypeError('fetch failed')` with the socket's error as `cause`, and the client wraps that once more.
 */
export function describeNetworkError(error: unknown): string {
  const chain = causeChain(error)
  for (const cause of chain) {
    const { code, message } = cause as { code?: unknown; message?: unknown }
    if (typeof code !== 'string') continue
    const reason = REASONS[code]
    if (reason) return reason
    if (CERTIFICATE_CODE.test(code)) {
      return `certificate not accepted (${String(message)}); for a private CA set NODE_EXTRA_CA_CERTS`
    }
  }
  const deepest = chain.at(-1) as { message?: unknown } | undefined
  if (deepest?.message === 'bad port')
    return 'fetch refuses that port, which belongs to another protocol: use another'
  return typeof deepest?.message === 'string' ? deepest.message : String(deepest)
}
