import { isIP, type LookupFunction } from 'node:net'
import ipaddr from 'ipaddr.js'
import type { Config } from '../config.js'

export interface ResolvedAddress {
  address: string
  family: 4 | 6
}

/** Every address a host name resolves to. */
export type Resolve = (hostname: string) => Promise<ResolvedAddress[]>

export interface AddressRules {
  /** PETSTORE_WEBHOOKS_ALLOW_PRIVATE: any address and plain http. */
  allowPrivate: boolean
  /** Plain http allowed (staging). */
  allowHttp: boolean
  resolve: Resolve
}

/** The rules the configuration sets: private addresses as PETSTORE_WEBHOOKS_ALLOW_PRIVATE says, plain http in staging. */
export const addressRulesOf = (config: Pick<Config, 'env' | 'webhooks'>, resolve: Resolve): AddressRules => ({
  allowPrivate: config.webhooks.allowPrivate,
  allowHttp: config.env === 'staging',
  resolve,
})

/**
 * A URL the rules refuse; `message` says why in words a partner understands (it becomes a 400's message).
 *
 * @example throw new WebhookUrlError('webhook URLs must not contain a user name or password')
 */
export class WebhookUrlError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'WebhookUrlError'
  }
}

/** Webhook URLs are at most this long, as sent (the schema's `maxLength`) and as stored (normalised). */
export const MAX_URL_LENGTH = 2048

/**
 * The URL, judged, and the one address the connection must go to: the caller connects there through
 * `pinnedLookup`, so the name is never looked up a second time (no DNS rebinding between check and use).
 * Scheme, credentials and literal addresses are judged before any lookup; a name is refused unless it
 * resolves and every address it resolves to is public.
 *
 * @example const { url, address } = await checkWebhookUrl('https://hooks.example.com/pets', rules)
 */
export async function checkWebhookUrl(
  raw: string,
  rules: AddressRules,
): Promise<{ url: URL; address: ResolvedAddress }> {
  const url = parseWebhookUrl(raw, rules)
  const literal = literalAddress(url.hostname)
  const addresses = literal ? [literal] : await resolveAll(url.hostname, rules.resolve)
  // A literal is named back as written (normalised); what a name resolves to is never told: it would
  // map the operator's network for anyone who can register a URL.
  if (!rules.allowPrivate) for (const address of addresses) refuseNonPublic(address, literal !== undefined)
  // resolveAll answers at least one address, or throws.
  return { url, address: addresses[0] as ResolvedAddress }
}

function parseWebhookUrl(raw: string, rules: AddressRules): URL {
  if (raw.length > MAX_URL_LENGTH) {
    throw new WebhookUrlError(`webhook URLs must be at most ${MAX_URL_LENGTH} characters long`)
  }
  if (!URL.canParse(raw)) throw new WebhookUrlError('the webhook URL is not a valid absolute URL')
  // WHATWG parsing turns every spelling of an IPv4 address (decimal, octal, hex, short) into dotted decimal.
  const url = new URL(raw)
  // What is stored and sent is the normalised form, which percent-encoding can make far longer (€ is %E2%82%AC).
  if (url.href.length > MAX_URL_LENGTH) {
    throw new WebhookUrlError(
      `webhook URLs must be at most ${MAX_URL_LENGTH} characters long once percent-encoded, and this one has ${url.href.length}`,
    )
  }
  const httpAllowed = rules.allowHttp || rules.allowPrivate
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && httpAllowed)) {
    throw new WebhookUrlError(`webhook URLs must use https, not ${url.protocol.slice(0, -1)}`)
  }
  if (url.username !== '' || url.password !== '') {
    throw new WebhookUrlError('webhook URLs must not contain a user name or password')
  }
  // A fragment is never sent to the receiver: a partner who wrote one expects something that cannot happen.
  if (url.href.includes('#')) throw new WebhookUrlError('webhook URLs must not contain a fragment (#...)')
  return url
}

/** The address a literal host stands for (`[::1]` loses its brackets), or undefined for a name. */
function literalAddress(hostname: string): ResolvedAddress | undefined {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname
  const family = isIP(bare)
  return family === 4 || family === 6 ? { address: bare, family } : undefined
}

/** How a lookup that ran out of time fails (the resolver's deadline cancels it, or c-ares gave up). */
const OUT_OF_TIME = new Set(['ECANCELLED', 'ETIMEOUT'])

async function resolveAll(hostname: string, resolve: Resolve): Promise<ResolvedAddress[]> {
  const answers = await resolve(hostname).catch((error: NodeJS.ErrnoException | undefined) => {
    if (OUT_OF_TIME.has(error?.code ?? '')) {
      throw new WebhookUrlError(
        `the host ${hostname} did not resolve in time: its DNS server does not answer`,
      )
    }
    return []
  })
  if (answers.length === 0) throw new WebhookUrlError(`the host ${hostname} does not resolve`)
  return answers.map(({ address }) => {
    const answer = literalAddress(address)
    if (!answer) throw new WebhookUrlError(`the host ${hostname} does not resolve to an IP address`)
    return answer
  })
}

/** ipaddr.js range names → words for the message; anything else not `unicast` is "reserved". */
const RANGE_WORDS: Record<string, string> = {
  unspecified: 'an unspecified',
  broadcast: 'a broadcast',
  multicast: 'a multicast',
  linkLocal: 'a link-local',
  loopback: 'a loopback',
  carrierGradeNat: 'a carrier-grade NAT',
  private: 'a private',
  uniqueLocal: 'a unique-local',
  rfc6052: 'a NAT64',
  '6to4': 'a 6to4',
  teredo: 'a Teredo',
  rfc6145: 'an IPv4-translated',
}

function refuseNonPublic({ address }: ResolvedAddress, literal: boolean): void {
  const range = rangeOf(address)
  if (range === 'unicast') return
  const words = RANGE_WORDS[range] ?? 'a reserved'
  const what = literal ? `${address}, ${words}` : words
  throw new WebhookUrlError(`the host resolves to ${what} address: webhook URLs must reach public addresses`)
}

/**
 * The ipaddr.js range of an address, IPv4-mapped forms judged as the IPv4 address they carry. ipaddr.js
 * calls IPv4-compatible addresses (`::7f00:1`, i.e. `::127.0.0.1`) `unicast`, so the low 32 bits of
 * anything in `::/96` that is otherwise unicast are judged as IPv4 too.
 */
function rangeOf(address: string): string {
  // Fail closed should Node's isIP ever accept a form ipaddr.js cannot read.
  if (!ipaddr.isValid(address)) return 'unreadable'
  const parsed = ipaddr.process(address)
  const range = parsed.range()
  if (range !== 'unicast' || parsed.kind() !== 'ipv6') return range
  const bytes = parsed.toByteArray()
  if (bytes.slice(0, 12).some((byte) => byte !== 0)) return range
  return ipaddr.fromByteArray(bytes.slice(12)).range()
}

/**
 * A `lookup` for `http.request` / `https.request` options that always answers `address` and never asks
 * DNS, so the connection goes to the address `checkWebhookUrl` judged. Node calls it with `all: true`
 * when it may try several families (`autoSelectFamily`, the default since Node 20), else without.
 *
 * @example http.request(url, { lookup: pinnedLookup({ address: '93.184.216.34', family: 4 }) })
 */
export function pinnedLookup(address: ResolvedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: address.address, family: address.family }])
    else callback(null, address.address, address.family)
  }
}
