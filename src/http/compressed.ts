import { negotiate } from '@fastify/accept-negotiator'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../errors.js'
import { sha256 } from '../sha256.js'
import { compress } from './compression.js'

/** The content codings sent, in order of preference when a client accepts several equally. */
const CODINGS = ['br', 'gzip', 'identity'] as const
export type ContentCoding = (typeof CODINGS)[number]

/**
 * A body shorter than this is sent as it is: compressing it would save less than a hundred bytes or so.
 * The dashboard's page (about 600 bytes) is just above it.
 */
export const MIN_COMPRESSED_BYTES = 512

/** Media types worth compressing: text. Images other than SVG, fonts and archives are compressed already. */
const COMPRESSIBLE = /^(?:text\/|application\/(?:javascript|json|x-yaml|xml)|image\/svg\+xml)/

/** One coding of a body. */
export interface Representation {
  /** A strong entity tag, quoted, that no other coding of the body shares. */
  readonly etag: string
  /** The bytes: read only to answer a 200 (a 304 never builds them). */
  body(): Buffer
}

/** A body the public surface sends, with what it is sent with. */
export interface StaticAsset {
  readonly contentType: string
  readonly cacheControl: string
  /** Headers of every answer, 304 included; a `vary` is added to the response's own. */
  readonly headers: Readonly<Record<string, string>>
  /** Whether the body is sent compressed once it can be: then every answer says `Vary: Accept-Encoding`. */
  readonly compressible: boolean
  /** The body in `coding` if that coding is ready; identity always is. */
  representation(coding: ContentCoding): Representation | undefined
}

export interface StaticAssetOptions {
  /** `Content-Type`, sent as given. */
  contentType: string
  /** `Cache-Control`: `no-cache` for a page, `public, max-age=31536000, immutable` for a hashed asset. */
  cacheControl: string
  /** Sent with every answer (`Content-Security-Policy`, `Referrer-Policy`, `Vary: Host`...). */
  headers?: Readonly<Record<string, string>>
  /** The entity tag of the body as it is; by default derived from its SHA-256. */
  etag?: string
}

/** The entity tag of a coding of the body tagged `etag` (`"x"` → `"x-br"`). */
export function codedEtag(etag: string, coding: ContentCoding): string {
  return coding === 'identity' ? etag : `${etag.slice(0, -1)}-${coding}"`
}

function isCompressible(contentType: string, length: number): boolean {
  return length >= MIN_COMPRESSED_BYTES && COMPRESSIBLE.test(contentType)
}

/**
 * A body to send with `sendStaticAsset`. Its brotli and gzip codings are made once, starting now, off the
 * event loop; until one is ready, the best ready one is sent. A coding that would not be smaller is never
 * offered.
 *
 * @example
 * const page = createStaticAsset(html, {
 *   contentType: 'text/html; charset=utf-8',
 *   cacheControl: 'no-cache',
 *   headers: { 'content-security-policy': "default-src 'none'" },
 * })
 * app.get('/dashboard', (request, reply) => sendStaticAsset(request, reply, page))
 */
export function createStaticAsset(body: Buffer | string, options: StaticAssetOptions): StaticAsset {
  const identity = typeof body === 'string' ? Buffer.from(body) : body
  const etag = options.etag ?? `"${sha256(identity).slice(0, 27)}"`
  const ready = new Map<ContentCoding, Representation>([['identity', { etag, body: () => identity }]])
  const compressible = isCompressible(options.contentType, identity.length)
  for (const coding of compressible ? (['gzip', 'br'] as const) : []) {
    compress(coding, identity).then(
      (coded) => {
        if (coded.length < identity.length)
          ready.set(coding, { etag: codedEtag(etag, coding), body: () => coded })
      },
      // A coding that failed (memory) is never offered: the body is still sent as it is.
      () => {},
    )
  }
  return {
    contentType: options.contentType,
    cacheControl: options.cacheControl,
    headers: options.headers ?? {},
    compressible,
    representation: (coding) => ready.get(coding),
  }
}

/**
 * Answers a GET or HEAD with `asset`: the coding the client prefers among those ready (RFC 9110 §12.5.3:
 * q-values, `q=0` refuses, `*`, `identity`; none acceptable or no header: identity; br before gzip on equal
 * q), `Content-Encoding`, `Vary: Accept-Encoding`, the coding's `ETag`, 412 when `If-Match` names another
 * and 304 when `If-None-Match` names it. Fastify writes `Content-Length` and leaves out a HEAD's body.
 */
export function sendStaticAsset(
  request: FastifyRequest,
  reply: FastifyReply,
  asset: StaticAsset,
): FastifyReply {
  const coding = codingFor(request.headers['accept-encoding'], asset)
  // A coding once ready stays ready, and codingFor chooses among the ready ones.
  const chosen = asset.representation(coding) as Representation
  if (!ifMatch(request.headers['if-match'], chosen.etag)) {
    return reply.send(new AppError('precondition_failed', 'the current version does not match If-Match'))
  }
  reply.header('cache-control', asset.cacheControl).header('etag', chosen.etag)
  for (const [name, value] of Object.entries(asset.headers)) {
    if (name.toLowerCase() === 'vary') addVary(reply, value)
    else reply.header(name, value)
  }
  if (asset.compressible) addVary(reply, 'Accept-Encoding')
  if (ifNoneMatch(request.headers['if-none-match'], chosen.etag)) return reply.code(304).send()
  if (coding !== 'identity') reply.header('content-encoding', coding)
  return reply.header('content-type', asset.contentType).send(chosen.body())
}

function codingFor(acceptEncoding: string | undefined, asset: StaticAsset): ContentCoding {
  if (acceptEncoding === undefined || !asset.compressible) return 'identity'
  const ready = CODINGS.filter((coding) => asset.representation(coding) !== undefined)
  if (ready.length === 1) return 'identity'
  // Content codings are case-insensitive (RFC 9110 §8.4.1); the negotiator compares them as written.
  return negotiate(acceptEncoding.toLowerCase(), ready) ?? 'identity'
}

/** RFC 9110 §13.1.1: `*`, or a list of entity tags compared strongly (a weak one never matches). */
function ifMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined || header.trim() === '*') return true
  return header.split(',').some((tag) => tag.trim() === etag)
}

/** RFC 9110 §13.1.2: `*`, or a list of entity tags compared weakly (`W/` aside). */
function ifNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  if (header.trim() === '*') return true
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)
}

/** Adds each of `names` to the response's `Vary` (CORS may have put `Origin` there), once. */
export function addVary(reply: FastifyReply, names: string): void {
  const current = reply.getHeader('vary')
  const list = current === undefined ? [] : String(current).split(',')
  const vary = list.map((name) => name.trim()).filter(Boolean)
  for (const name of names.split(',').map((each) => each.trim())) {
    if (!vary.some((present) => present === '*' || present.toLowerCase() === name.toLowerCase()))
      vary.push(name)
  }
  reply.header('vary', vary.join(', '))
}
