import type { IncomingHttpHeaders } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { AppError } from '../errors.js'

const UTF8 = new TextDecoder('utf-8', { fatal: true })
/** A JSON number with a fraction or an exponent, found where a value may start (never inside a string). */
const NUMBER = /-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?/y

/**
 * JSON is the only body the API takes: every other Content-Type is a 415. The body must be valid UTF-8
 * (never decoded into U+FFFD), and a number is never rounded into an integer: `9007199254740990.6` or
 * `1.0000000000000001` would parse to a whole number, so they are 400s here rather than stored wrong. A
 * `__proto__` or `constructor` key parses as a plain own property (JSON.parse never touches prototypes)
 * and the schemas then refuse it as an unknown field, so it never reaches the services.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  // PATCH takes RFC 7396 merge patches under their own media type too; they are JSON all the same.
  app.addContentTypeParser(
    ['application/json', 'application/merge-patch+json'],
    { parseAs: 'buffer' },
    (request, body, done) => {
      try {
        refuseAmbiguousEncoding(request.headers)
        done(null, parseJson(body as Buffer))
      } catch (error) {
        done(error as AppError, undefined)
      }
    },
  )
}

/** UTF-8's labels (WHATWG Encoding): the only charset a JSON body may declare. */
const UTF8_LABELS = new Set(['utf-8', 'utf8', 'unicode-1-1-utf-8'])

/**
 * CONTRACT §12: a body is never guessed at. A `Content-Encoding` other than `identity` (the body would have
 * to be decompressed) and a declared charset other than UTF-8 (it would have to be transcoded) are 415s.
 */
function refuseAmbiguousEncoding(headers: IncomingHttpHeaders): void {
  const encoding = headers['content-encoding']?.trim().toLowerCase()
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
    throw new AppError(
      'unsupported_media_type',
      `Content-Encoding ${encoding.slice(0, 40)} is not accepted: send the JSON body uncompressed`,
    )
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(headers['content-type'] ?? '')?.[1]?.toLowerCase()
  if (charset !== undefined && !UTF8_LABELS.has(charset)) {
    throw new AppError(
      'unsupported_media_type',
      `charset ${charset.slice(0, 40)} is not accepted: JSON bodies are UTF-8 (send charset=utf-8 or none)`,
    )
  }
}

/**
 * An empty body is no body, whatever its Content-Type says: an operation that takes none, or only optional
 * fields, is fine with it, and one that needs a body refuses it as it refuses a request without one.
 */
function parseJson(body: Buffer): unknown {
  if (body.length === 0) return undefined
  let text: string
  try {
    text = UTF8.decode(body)
  } catch {
    throw new AppError('invalid_request', 'the body is not valid UTF-8')
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new AppError('invalid_request', 'the body is not valid JSON')
  }
  if (/\d[.eE]/.test(text)) refuseRoundedIntegers(text)
  return value
}

/**
 * Walks the number literals outside strings; one whose double is a whole number it is not exactly is a 400
 * naming the field it is the value of (the key read last before it), as every refused number must (§2).
 */
function refuseRoundedIntegers(text: string): void {
  let field: string | undefined
  for (let index = 0; index < text.length; index++) {
    const char = text[index]
    if (char === '"') {
      const end = stringEnd(text, index)
      if (/^\s*:/.test(text.slice(end + 1, end + 64))) field = JSON.parse(text.slice(index, end + 1))
      index = end
    } else if (char === '-' || (char !== undefined && char >= '0' && char <= '9')) {
      NUMBER.lastIndex = index
      const match = NUMBER.exec(text)
      if (!match) continue
      if (isRounded(match[0], match[1] ?? '', match[2] ?? '', Number(match[3] ?? 0))) {
        const literal = match[0].slice(0, 40)
        throw new AppError(
          'invalid_request',
          field === undefined
            ? `the number ${literal} is not exactly an integer: send whole numbers without a fraction`
            : `${field.slice(0, 40)} must be a whole number: ${literal} is not exactly an integer`,
        )
      }
      index = NUMBER.lastIndex - 1
    }
  }
}

/** The index of the quote that closes the JSON string opening at `start` (the text parsed already). */
function stringEnd(text: string, start: number): number {
  let index = start + 1
  while (text[index] !== '"') index += text[index] === '\\' ? 2 : 1
  return index
}

/** True when JSON.parse makes a whole number of a literal whose exact decimal value is another number. */
function isRounded(literal: string, whole: string, fraction: string, exponent: number): boolean {
  const parsed = Number(literal)
  if (!Number.isInteger(parsed) || (fraction === '' && exponent === 0)) return false
  // The literal is digits × 10^scale; it is a whole number exactly when the scale is not negative once
  // the trailing zeros of its digits are dropped.
  const digits = (whole + fraction).replace(/^0+(?=\d)/, '')
  const significant = digits.replace(/0+$/, '')
  const scale = exponent - fraction.length + (digits.length - significant.length)
  if (significant === '') return false
  if (scale < 0) return true
  const exact = BigInt(significant) * 10n ** BigInt(scale)
  return BigInt(parsed) !== (literal.startsWith('-') ? -exact : exact)
}
