import { randomBytes } from 'node:crypto'
import type { Environment } from '../config.js'
import { sha256 } from '../sha256.js'

const PREFIX: Readonly<Record<Environment, string>> = { production: 'ps_live_', staging: 'ps_test_' }
/** 24 random bytes: 192 bits, written as 32 base64url characters. */
export const RANDOM_BYTES = 24
const KEY_PATTERN = /^ps_(live|test)_[A-Za-z0-9_-]{32}$/
/** How much of a key `keys list` may show: the environment prefix and four random characters. */
export const SHOWN_PREFIX_LENGTH = 12

export function generateApiKey(env: Environment): string {
  return PREFIX[env] + randomBytes(RANDOM_BYTES).toString('base64url')
}

/** Keys carry 192 random bits, so a fast hash is enough: nobody can brute-force the preimage. */
export function hashApiKey(key: string): string {
  return sha256(key)
}

export function shownPrefix(key: string): string {
  return key.slice(0, SHOWN_PREFIX_LENGTH)
}

/** The environment a well-formed key was issued for, or undefined when it is not a key at all. */
export function environmentOfKey(token: string): Environment | undefined {
  const match = KEY_PATTERN.exec(token)
  if (!match) return undefined
  return match[1] === 'live' ? 'production' : 'staging'
}
