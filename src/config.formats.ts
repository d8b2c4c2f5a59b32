import { isIP } from 'node:net'
import Format from 'typebox/format'
import { isHeaderEntry, resourceAttributesOf } from './otel-key-values.js'

/**
 * The formats of config.schema.ts's variables: what a value of each must be, checked by the loader
 * (config.ts) through TypeBox's format registry, and the one line a bad value gets.
 */

const HOST_NAME = /^(?=.*[A-Za-z-])[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/

/** What a value of each format must be, in the one line a bad value gets. */
export const FORMATS: Readonly<Record<string, { check(text: string): boolean; expectation: string }>> = {
  'petstore.host': {
    // Digits and dots only must be an IPv4 address: `999.1.1.1` is no host name.
    check: (text) => isIP(text.replace(/^\[|\]$/g, '')) !== 0 || HOST_NAME.test(text),
    expectation: 'must be a host name or an IP address',
  },
  'petstore.database-url': {
    // A file's path may hold spaces; a URL may not.
    check: (text) =>
      /^postgres(ql)?:\/\//.test(text)
        ? urlOf(text) !== undefined
        : /^sqlite:.+/.test(text) && text !== 'sqlite::memory:',
    expectation: 'must be sqlite:<path of a file> or a valid postgres:// URL, with no space in or around it',
  },
  'petstore.base-url': {
    check: (text) => {
      const url = urlOf(text)
      const web = url && (url.protocol === 'http:' || url.protocol === 'https:')
      return Boolean(web && /\/v1\/?$/.test(url.pathname) && !url.search && !url.hash)
    },
    expectation: 'must be an http(s) URL ending in /v1, with no space in or around it',
  },
  'petstore.origins': {
    check: (text) =>
      listOf(text).every((origin) => URL.canParse(origin) && new URL(origin).origin === origin),
    expectation: 'must be a comma list of origins like https://shop.example',
  },
  'petstore.redis-url': {
    check: (text) => {
      const url = urlOf(text)
      return Boolean(url && (url.protocol === 'redis:' || url.protocol === 'rediss:') && url.hostname)
    },
    expectation: 'must be a redis:// or rediss:// URL, with no space in or around it',
  },
  'petstore.otlp-url': {
    check: (text) => {
      const url = urlOf(text)
      return Boolean(url && (url.protocol === 'http:' || url.protocol === 'https:'))
    },
    expectation: 'must be an http(s) URL of an OTLP/HTTP receiver, with no space in or around it',
  },
  'petstore.otel-resource': {
    // What the SDK would discard whole (and with it a `service.name` given there) is refused at start-up.
    check: (text) => resourceAttributesOf(text) !== undefined,
    expectation:
      "must be a comma list of key=value pairs, ',' and '=' percent-encoded, 255 characters each at most",
  },
  'petstore.otel-headers': {
    // The SDK drops, without a word, an entry it cannot read: the collector would then refuse every export.
    check: (text) => text.split(',').every((entry) => entry.trim() === '' || isHeaderEntry(entry)),
    expectation: "must be a comma list of key=value pairs, ',' and '=' in them percent-encoded",
  },
  'petstore.otel-boolean': {
    // OpenTelemetry's booleans are case-insensitive.
    check: (text) => /^(true|false)$/i.test(text),
    expectation: 'must be true or false (in any case)',
  },
  'petstore.trust-proxy': {
    check: (text) => /^(true|false|\d{1,2})$/.test(text) || listOf(text).every(isAddressOrCidr),
    expectation: 'must be true, false, a hop count or a comma list of proxy addresses/CIDRs',
  },
}
for (const [name, format] of Object.entries(FORMATS)) Format.Set(name, format.check)

/** The items of a comma list, trimmed, without empty ones. */
export function listOf(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
}

function isAddressOrCidr(item: string): boolean {
  const [address = '', prefix, ...rest] = item.split('/')
  const bits = isIP(address) === 6 ? 128 : 32
  const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits)
  return isIP(address) !== 0 && rest.length === 0 && prefixOk
}

/**
 * The URL a variable's text is, or undefined. A URL parser drops spaces and control characters (around the
 * URL, and tabs or line breaks in it), while the service uses the text as given (the OTLP SDK appends
 * `/v1/traces` to it, Link headers start with the base address): such text is refused, not repaired.
 */
function urlOf(text: string): URL | undefined {
  return !/[\s\p{Cc}]/u.test(text) && URL.canParse(text) ? new URL(text) : undefined
}
