import { Resolver } from 'node:dns/promises'
import { createBoundedMap } from '../bounded-map.js'
import type { Resolve, ResolvedAddress } from './address.js'

/** A lookup takes this long at most, in all: its resources are freed then (no thread waits on it). */
export const RESOLVE_DEADLINE_MS = 5_000
/**
 * Once A or AAAA has answered with an address, the other family gets this long more (RFC 8305's
 * Resolution Delay): a server that never answers AAAA costs 50 ms of a lookup, not its whole deadline.
 */
export const SECOND_FAMILY_WAIT_MS = 50
/** Answers are kept for their TTL, but never longer than this. */
export const MAX_TTL_S = 300
/** A name that does not resolve is asked again after this long at the earliest. */
const NEGATIVE_TTL_S = 5
/** Names remembered at most (the oldest is dropped). */
const MAX_NAMES = 10_000

interface Cached {
  until: number
  answer: Promise<ResolvedAddress[]>
}

/**
 * Webhook host names resolved by DNS through c-ares (node:dns `Resolver`): off libuv's thread pool, which
 * `getaddrinfo` shares with the file system and crypto, so a name whose server never answers holds no
 * thread and delays no other lookup. Each lookup has RESOLVE_DEADLINE_MS in all, then is cancelled;
 * answers are cached within their TTL (failures for 5 s) and a lookup under way is shared. `localhost`
 * and names under it are loopback (RFC 6761) without asking. Not read: `/etc/hosts`.
 *
 * @example const resolve = createDnsResolve(); await resolve('hooks.example.com')
 */
export function createDnsResolve(
  options: { servers?: string[]; now?: () => number; deadlineMs?: number } = {},
): Resolve {
  const now = options.now ?? Date.now
  const cache = createBoundedMap<string, Cached>(MAX_NAMES)
  return (hostname) => {
    const name = hostname.toLowerCase()
    if (name === 'localhost' || name.endsWith('.localhost')) {
      return Promise.resolve([
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ])
    }
    const cached = cache.get(name)
    if (cached && cached.until > now()) return cached.answer
    const found = lookup(name, options.deadlineMs ?? RESOLVE_DEADLINE_MS, options.servers)
    const entry: Cached = { until: Number.POSITIVE_INFINITY, answer: found.then(({ answers }) => answers) }
    cache.set(name, entry)
    found.then(
      ({ ttl }) => {
        entry.until = now() + ttl * 1000
      },
      () => {
        entry.until = now() + NEGATIVE_TTL_S * 1000
      },
    )
    return entry.answer
  }
}

/**
 * A and AAAA at once, within the deadline, and the second family within SECOND_FAMILY_WAIT_MS of the
 * first's addresses; the shortest TTL of the answers stands for all.
 */
async function lookup(
  name: string,
  deadlineMs: number,
  servers?: string[],
): Promise<{ answers: ResolvedAddress[]; ttl: number }> {
  const resolver = new Resolver({ timeout: Math.ceil(deadlineMs / 2), tries: 2 })
  if (servers) resolver.setServers(servers)
  const deadline = setTimeout(() => resolver.cancel(), deadlineMs)
  let secondFamily: NodeJS.Timeout | undefined
  const waitForTheOther = <T>(found: T[]): T[] => {
    if (found.length > 0) secondFamily ??= setTimeout(() => resolver.cancel(), SECOND_FAMILY_WAIT_MS)
    return found
  }
  try {
    const [v4, v6] = await Promise.allSettled([
      resolver.resolve4(name, { ttl: true }).then(waitForTheOther),
      resolver.resolve6(name, { ttl: true }).then(waitForTheOther),
    ])
    const answers = [
      ...(v4.status === 'fulfilled' ? v4.value.map((a) => ({ ...a, family: 4 as const })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((a) => ({ ...a, family: 6 as const })) : []),
    ]
    if (answers.length === 0) {
      const failure = [v4, v6].find((result) => result.status === 'rejected')
      throw failure?.reason ?? new Error(`${name} has no address`)
    }
    const ttl = Math.min(MAX_TTL_S, ...answers.map((answer) => answer.ttl))
    return { answers: answers.map(({ address, family }) => ({ address, family })), ttl }
  } finally {
    clearTimeout(deadline)
    clearTimeout(secondFamily)
  }
}
