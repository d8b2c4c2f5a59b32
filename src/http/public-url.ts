import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { AppError } from '../errors.js'
import { parseInteger } from '../integer.js'
import { countHeader } from './header-lines.js'

const HOST_NAME =
  /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/
const IPV6_LITERAL = /^\[[0-9A-Fa-f:.]+\]$/

/** `host[:port]` as RFC 9110 allows it in Host: a name, an IPv4 address or a bracketed IPv6 one. */
export function isValidHost(value: string): boolean {
  const match = /^(.*?)(?::(\d{1,5}))?$/.exec(value)
  const [, name = '', port] = match ?? []
  if (port !== undefined && parseInteger(port) > 65535) return false
  return value.length <= 261 && (HOST_NAME.test(name) || IPV6_LITERAL.test(name))
}

/**
 * The base address ending in /v1 for `Link` headers and the OpenAPI `servers`: the configured one, or
 * one derived from the request, only from well-formed sources: the Host (or, with TRUST_PROXY only,
 * X-Forwarded-Host) when it is a valid host[:port], else the listening address; `https` only when the
 * connection (or, with TRUST_PROXY only, X-Forwarded-Proto) says exactly that, else `http`.
 */
export function publicUrlOf(config: Config, request: FastifyRequest): string {
  if (config.publicUrl) return config.publicUrl
  const host = isValidHost(request.host) ? request.host : `${config.host}:${config.port}`
  const protocol = request.protocol === 'https' ? 'https' : 'http'
  return `${protocol}://${host}/v1`
}

/** The request headers a derived base address depends on, for `Vary`. */
export function baseAddressHeaders(config: Config): string | undefined {
  if (config.publicUrl) return undefined
  return config.trustProxy === false ? 'Host' : 'Host, X-Forwarded-Host, X-Forwarded-Proto'
}

/** RFC 9112 §3.2: a request with more than one Host header line is a 400, whatever its path. */
export function refuseDuplicateHosts(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    if (countHeader(request.raw.rawHeaders, 'host') > 1) {
      done(new AppError('invalid_request', 'the request must carry exactly one Host header'))
    } else done()
  })
}
