import proxyaddr from 'proxy-addr'
import type { Config } from '../config.js'

type Trust = (address: string, hop: number) => boolean

/**
 * TRUST_PROXY as the trust function Fastify takes: none, all, the first `hops` proxies from the socket
 * inwards, or these addresses.
 */
export function trustFunctionOf(trust: Config['trustProxy']): Trust {
  if (trust === false || trust === true) return () => trust
  if (typeof trust === 'number') return (_address, hop) => hop < trust
  return proxyaddr.compile([...trust])
}
