/**
 * Every environment variable the service reads, parsed once at start into a frozen Config.
 * A bad value throws ConfigError whose message is the one line the process prints before exiting.
 */
import { isIP } from 'node:net'

export type Environment = 'production' | 'staging'
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

export type DatabaseConfig =
  | { readonly kind: 'sqlite'; readonly path: string }
  | {
      readonly kind: 'postgres'
      readonly url: string
      readonly poolSize: number
      readonly statementTimeoutMs: number
    }

export interface Config {
  readonly port: number
  readonly host: string
  readonly env: Environment
  readonly database: DatabaseConfig
  /** When set, rate-limit state lives in this Redis and is shared by every instance. */
  readonly redisUrl: string | undefined
  /** Base address ending in /v1 for Link headers; undefined: derived from each request. */
  readonly publicUrl: string | undefined
  readonly productionUrl: string
  readonly stagingUrl: string
  readonly corsOrigins: readonly string[]
  readonly logLevel: LogLevel
  /** When set, /metrics is served on this port instead of the API port. */
  readonly metricsPort: number | undefined
  /** Refusals inside one window after which a key (or client IP) is banned. */
  readonly banAfter: number
  readonly banSeconds: number
  /** Which proxies' X-Forwarded-For to believe: none (false), all (true), a hop count or addresses. */
  readonly trustProxy: boolean | number | readonly string[]
  /** Slow clients: the longest a request's headers, and the whole request, may take to arrive. */
  readonly headersTimeoutMs: number
  readonly requestTimeoutMs: number
}

export class ConfigError extends Error {
  constructor(variable: string, expectation: string, value: string) {
    super(`${variable} ${expectation} (got ${JSON.stringify(value)})`)
    this.name = 'ConfigError'
  }
}

type Env = Readonly<Record<string, string | undefined>>

export function loadConfig(env: Env): Config {
  const config = parseVariables(env)
  if (config.metricsPort !== undefined && config.metricsPort !== 0 && config.metricsPort === config.port) {
    throw new ConfigError('METRICS_PORT', 'must differ from PORT', String(config.metricsPort))
  }
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    const value = String(config.headersTimeoutMs)
    throw new ConfigError('PETSTORE_HEADERS_TIMEOUT_MS', 'must not exceed PETSTORE_REQUEST_TIMEOUT_MS', value)
  }
  return Object.freeze(config)
}

function parseVariables(env: Env): Config {
  const metricsPort = env.METRICS_PORT
  return {
    port: parsePort(env, 'PORT', '8080'),
    host: parseHost(env.HOST ?? '127.0.0.1'),
    env: parseChoice(env, 'PETSTORE_ENV', ['production', 'staging'], 'production'),
    database: parseDatabase(env),
    redisUrl: env.REDIS_URL === undefined ? undefined : parseRedisUrl(env.REDIS_URL),
    publicUrl: env.PETSTORE_PUBLIC_URL === undefined ? undefined : parseBaseUrl(env, 'PETSTORE_PUBLIC_URL'),
    productionUrl: parseBaseUrl(env, 'PETSTORE_PRODUCTION_URL', 'https://petstore.example.com/v1'),
    stagingUrl: parseBaseUrl(env, 'PETSTORE_STAGING_URL', 'https://staging.petstore.example.com/v1'),
    corsOrigins: parseOrigins(env.CORS_ORIGINS ?? ''),
    logLevel: parseChoice(
      env,
      'LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      'info',
    ),
    metricsPort: metricsPort === undefined ? undefined : parsePort(env, 'METRICS_PORT', metricsPort),
    banAfter: parseCount(env, 'PETSTORE_BAN_AFTER', '10'),
    banSeconds: parseCount(env, 'PETSTORE_BAN_SECONDS', '900'),
    trustProxy: parseTrustProxy(env.TRUST_PROXY ?? 'false'),
    headersTimeoutMs: parseCount(env, 'PETSTORE_HEADERS_TIMEOUT_MS', '10000'),
    requestTimeoutMs: parseCount(env, 'PETSTORE_REQUEST_TIMEOUT_MS', '30000'),
  }
}

function parsePort(env: Env, name: string, fallback: string): number {
  const text = env[name] ?? fallback
  const port = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN
  if (!(port >= 0 && port <= 65535)) throw new ConfigError(name, 'must be an integer from 0 to 65535', text)
  return port
}

function parseCount(env: Env, name: string, fallback: string): number {
  const text = env[name] ?? fallback
  const count = /^\d{1,9}$/.test(text) ? Number(text) : 0
  if (count < 1) throw new ConfigError(name, 'must be a whole number from 1 to 999999999', text)
  return count
}

function parseTrustProxy(text: string): Config['trustProxy'] {
  if (text === 'false') return false
  if (text === 'true') return true
  if (/^\d{1,2}$/.test(text)) return Number(text)
  const addresses = text.split(',').map((item) => item.trim())
  const valid = (item: string) => {
    const [address = '', prefix, ...rest] = item.split('/')
    const bits = isIP(address) === 6 ? 128 : 32
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits)
    return isIP(address) !== 0 && rest.length === 0 && prefixOk
  }
  if (!addresses.every(valid)) {
    throw new ConfigError(
      'TRUST_PROXY',
      'must be true, false, a hop count or a comma list of proxy addresses/CIDRs',
      text,
    )
  }
  return addresses
}

function parseHost(text: string): string {
  const hostName = /^(?=.*[A-Za-z-])[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/
  // Digits and dots only must be an IPv4 address: `999.1.1.1` is no host name.
  if (isIP(text.replace(/^\[|\]$/g, '')) === 0 && !hostName.test(text)) {
    throw new ConfigError('HOST', 'must be a host name or an IP address', text)
  }
  return text
}

function parseChoice<T extends string>(env: Env, name: string, choices: readonly T[], fallback: T): T {
  const text = env[name] ?? fallback
  if (!(choices as readonly string[]).includes(text)) {
    throw new ConfigError(name, `must be one of ${choices.join(', ')}`, text)
  }
  return text as T
}

function parseDatabase(env: Env): DatabaseConfig {
  const text = env.DATABASE_URL ?? 'sqlite:./data/petstore.sqlite'
  if (/^postgres(ql)?:\/\//.test(text)) {
    if (!URL.canParse(text)) throw new ConfigError('DATABASE_URL', 'must be a valid postgres:// URL', text)
    return {
      kind: 'postgres',
      url: text,
      poolSize: parseCount(env, 'PETSTORE_DB_POOL_SIZE', '10'),
      statementTimeoutMs: parseCount(env, 'PETSTORE_DB_STATEMENT_TIMEOUT_MS', '5000'),
    }
  }
  const path = text.startsWith('sqlite:') ? text.slice('sqlite:'.length) : ''
  if (path === '') throw new ConfigError('DATABASE_URL', 'must be sqlite:<path> or a postgres:// URL', text)
  return { kind: 'sqlite', path }
}

function parseRedisUrl(text: string): string {
  const url = URL.canParse(text) ? new URL(text) : undefined
  if (!url || (url.protocol !== 'redis:' && url.protocol !== 'rediss:') || !url.hostname) {
    throw new ConfigError('REDIS_URL', 'must be a redis:// or rediss:// URL', text)
  }
  return text
}

function parseBaseUrl(env: Env, name: string, fallback?: string): string {
  const text = env[name] ?? fallback ?? ''
  const url = URL.canParse(text) ? new URL(text) : undefined
  const ok = url && (url.protocol === 'http:' || url.protocol === 'https:') && /\/v1\/?$/.test(url.pathname)
  if (!ok || url.search || url.hash) throw new ConfigError(name, 'must be an http(s) URL ending in /v1', text)
  return text.replace(/\/$/, '')
}

function parseOrigins(text: string): string[] {
  const origins = text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
  for (const origin of origins) {
    if (!URL.canParse(origin) || new URL(origin).origin !== origin) {
      throw new ConfigError(
        'CORS_ORIGINS',
        'must be a comma list of origins like https://shop.example',
        origin,
      )
    }
  }
  return origins
}
