import type { FastifyRequest } from 'fastify'
import type { Config } from '../config.js'

const SANE_HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/

/** The base address ending in /v1 for Link headers: configured, or derived from the request's Host. */
export function publicUrlOf(config: Config, request: FastifyRequest): string {
  if (config.publicUrl) return config.publicUrl
  const host = SANE_HOST.test(request.host) ? request.host : `${config.host}:${config.port}`
  return `${request.protocol}://${host}/v1`
}
