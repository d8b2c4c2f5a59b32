import type { IncomingMessage } from 'node:http'
import proxyaddr from 'proxy-addr'
import type { Config } from '../config.js'

type Trust = (address: string, hop: number) => boolean

/** TRUST_PROXY as a trust function: none, all, the first `hops` proxies from the socket inwards, or addresses. */
export function trustFunctionOf(trust: Config['trustProxy']): Trust {
  if (trust === false || trust === true) return () => trust
  if (typeof trust === 'number') return (_address, hop) => hop < trust
  return proxyaddr.compile([...trust])
}

/**
 * The client's address the way Fastify computes `request.ip`, for requests answered before Fastify's own
 * request existed (a URL that does not decode): the socket's address, or the nearest untrusted one in
 * X-Forwarded-For.
 */
export function clientIpOf(request: IncomingMessage, trust: Trust): string {
  return proxyaddr(request, trust)
}
