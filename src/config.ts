/**
 * The configuration: every environment variable of config.schema.ts, parsed once at start into a frozen
 * Config. A bad value throws ConfigError whose message is the one line the process prints before exiting.
 */
import type { Static } from 'typebox'
import Schema from 'typebox/schema'
import { FORMATS, listOf } from './config.formats.js'
import { CONFIG_VARIABLES, type ConfigSchema, type VariableSchema } from './config.schema.js'
import { unknownVariableWarnings } from './config-typos.js'
import { parseInteger } from './integer.js'
import { resourceAttributesOf } from './otel-key-values.js'
import { redactUrl } from './redact-url.js'

type Variables = Static<typeof ConfigSchema>
export type Environment = Variables['PETSTORE_ENV']
export type LogLevel = Variables['LOG_LEVEL']
export type Config = Readonly<
  ReturnType<typeof toConfig> & {
    /** What start-up warns about: unknown `PETSTORE_*` variables (with the closest known name), private webhook addresses allowed. */
    warnings: readonly string[]
  }
>
export type DatabaseConfig = Config['database']
export type TracingConfig = NonNullable<Config['tracing']>

export class ConfigError extends Error {
  /** `value` undefined: a secret's, which is not shown at all. */
  constructor(variable: string, expectation: string, value: string | undefined) {
    // A URL's password never reaches the terminal or the logs, even in a value that does not parse.
    const shown = value === undefined ? 'its value is not shown' : `got ${JSON.stringify(redactUrl(value))}`
    super(`${variable} ${expectation} (${shown})`)
    this.name = 'ConfigError'
  }
}

type Env = Readonly<Record<string, string | undefined>>

export function loadConfig(env: Env): Config {
  if (env.PETSTORE_DB_STATEMENT_TIMEOUT_MS !== undefined) {
    const value = env.PETSTORE_DB_STATEMENT_TIMEOUT_MS
    throw new ConfigError('PETSTORE_DB_STATEMENT_TIMEOUT_MS', 'was replaced by PETSTORE_DB_TIMEOUT_MS', value)
  }
  const config = toConfig(parseVariables(env))
  if (config.metricsPort !== undefined && config.metricsPort !== 0 && config.metricsPort === config.port) {
    throw new ConfigError('METRICS_PORT', 'must differ from PORT', String(config.metricsPort))
  }
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    const value = String(config.headersTimeoutMs)
    throw new ConfigError('PETSTORE_HEADERS_TIMEOUT_MS', 'must not exceed PETSTORE_REQUEST_TIMEOUT_MS', value)
  }
  const warnings = [...unknownVariableWarnings(env)]
  if (config.webhooks.allowPrivate) {
    warnings.push(
      'PETSTORE_WEBHOOKS_ALLOW_PRIVATE=1: webhook URLs may reach private and loopback addresses over plain http; never in production',
    )
  }
  return Object.freeze({ ...config, warnings })
}

/**
 * Each variable as set (or its default), checked against its schema; integers parsed by `parseInteger`.
 * An OpenTelemetry variable the service does not read is taken as unset (`readOtel`).
 */
function parseVariables(env: Env): Variables {
  const values: Record<string, string | number> = {}
  const otel = readOtel(env)
  for (const [name, schema] of CONFIG_VARIABLES) {
    const given = name.startsWith('OTEL_') ? otel(name) : env[name]
    const text = given ?? (schema.default === undefined ? undefined : String(schema.default))
    if (text === undefined) continue
    const value = numberOf(schema, text)
    if (!Schema.Check(schema, value)) {
      throw new ConfigError(name, expectation(schema), schema['x-secret'] ? undefined : text)
    }
    values[name] = value
  }
  return values as Variables
}

/** The general variable that each traces-only one overrides when set (as OpenTelemetry's specification says). */
const OVERRIDDEN_BY_TRACES: Readonly<Record<string, string>> = {
  OTEL_EXPORTER_OTLP_ENDPOINT: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  OTEL_EXPORTER_OTLP_PROTOCOL: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
}

/**
 * An OpenTelemetry variable's value as the service reads it: OpenTelemetry's rule, an empty value is the
 * same as none (compose.yaml leaves the endpoint empty without the tracing profile); and none at all for
 * what the service does not read, so that it is not checked. A shared environment sets these variables for
 * every component in it (another one's OTEL_EXPORTER_OTLP_PROTOCOL=grpc for its metrics, a sampler only
 * another SDK knows): with tracing off (no endpoint, or OTEL_SDK_DISABLED=true) the service reads none of
 * them, and a general variable whose traces-only one is set it never reads.
 */
function readOtel(env: Env): (name: string) => string | undefined {
  const given = (name: string) => (env[name] === '' ? undefined : env[name])
  const endpoint = given('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ?? given('OTEL_EXPORTER_OTLP_ENDPOINT')
  if (endpoint === undefined || given('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return () => undefined
  return (name) => {
    const overriding = OVERRIDDEN_BY_TRACES[name]
    return overriding !== undefined && given(overriding) !== undefined ? undefined : given(name)
  }
}

/**
 * A decimal number as the OpenTelemetry SDK reads OTEL_TRACES_SAMPLER_ARG (`Number()`: `0.01`, `.01`, `1.`,
 * `1e-2`, a sign, spaces around it), but never the other texts `Number()` takes (`0x10`, `Infinity`, blank).
 */
const DECIMAL = /^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i

/** An integer's text as `parseInteger` reads it; a number's if DECIMAL (else NaN); other text as it is. */
function numberOf(schema: VariableSchema, text: string): string | number {
  if (schema.type === 'integer') return parseInteger(text)
  if (schema.type === 'number') return DECIMAL.test(text) ? Number(text) : Number.NaN
  return text
}

function expectation(schema: VariableSchema): string {
  if (schema.enum) return `must be one of ${schema.enum.join(', ')}`
  if (schema.type === 'integer') return `must be a whole number from ${schema.minimum} to ${schema.maximum}`
  if (schema.type === 'number') {
    const from = schema.minimum === undefined ? 'above 0' : `from ${schema.minimum}`
    return `must be a number ${from}, at most ${schema.maximum}`
  }
  return FORMATS[schema.format ?? '']?.expectation ?? 'is not valid'
}

function toConfig(variables: Variables) {
  return {
    port: variables.PORT,
    host: variables.HOST,
    env: variables.PETSTORE_ENV,
    database: databaseOf(variables),
    /** When set, rate-limit state lives in this Redis and is shared by every instance. */
    redisUrl: variables.REDIS_URL,
    /** The longest a rate-limit decision waits for Redis. */
    redisTimeoutMs: variables.PETSTORE_REDIS_TIMEOUT_MS,
    /** Base address ending in /v1 for Link headers; undefined: derived from each request. */
    publicUrl: variables.PETSTORE_PUBLIC_URL?.replace(/\/$/, ''),
    /** The other environments' base addresses listed in the OpenAPI servers; undefined: not listed. */
    productionUrl: variables.PETSTORE_PRODUCTION_URL?.replace(/\/$/, ''),
    stagingUrl: variables.PETSTORE_STAGING_URL?.replace(/\/$/, ''),
    corsOrigins: listOf(variables.CORS_ORIGINS ?? '') as readonly string[],
    logLevel: variables.LOG_LEVEL,
    /** When set, /metrics is served on this port instead of the API port. */
    metricsPort: variables.METRICS_PORT,
    /** Refusals inside one window after which a key (or client IP) is banned. */
    banAfter: variables.PETSTORE_BAN_AFTER,
    banSeconds: variables.PETSTORE_BAN_SECONDS,
    /** Requests per minute and client IP to the unauthenticated documentation. */
    publicPerMinute: variables.PETSTORE_PUBLIC_PER_MINUTE,
    /** Which proxies' X-Forwarded-For to believe: none (false), all (true), a hop count or addresses. */
    trustProxy: trustProxyOf(variables.TRUST_PROXY),
    /** Slow clients: the longest a request's headers, and the whole request, may take to arrive. */
    headersTimeoutMs: variables.PETSTORE_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: variables.PETSTORE_REQUEST_TIMEOUT_MS,
    /** On SIGTERM, the longest the drain may take before the process exits anyway. */
    drainSeconds: variables.PETSTORE_DRAIN_SECONDS,
    webhooks: {
      /** The longest one attempt may take. */
      timeoutMs: variables.PETSTORE_WEBHOOK_TIMEOUT_MS,
      /** Multiplies every delay of the delivery schedule (tests compress it). */
      retryScale: variables.PETSTORE_WEBHOOK_RETRY_SCALE,
      /** Nice levels the dispatcher's thread runs below the process (Linux). */
      threadNice: variables.PETSTORE_WEBHOOK_THREAD_NICE,
      /** Any address and plain http: development and tests only. */
      allowPrivate: variables.PETSTORE_WEBHOOKS_ALLOW_PRIVATE === '1',
    },
    /** OpenTelemetry tracing, when an endpoint is set and the SDK not disabled; undefined: off. */
    tracing: tracingOf(variables),
  }
}

/**
 * On when an OTLP endpoint is set and OTEL_SDK_DISABLED is not `true` (in any case); without an endpoint
 * no SDK is loaded (the SDK alone would export to localhost). Off, every OTEL_ variable was read as unset
 * (`readOtel`), the endpoints too. The variables mean what they mean to the SDK; where the service is
 * stricter, it is deliberate (docs/observability.md): with tracing on, a value the SDK would warn about and
 * replace by its default (a sampler it does not know, a ratio that is blank, no decimal number or outside
 * [0, 1], an OTEL_SDK_DISABLED neither `true` nor `false`, resource attributes it would drop) stops start-up
 * with one line naming the variable; OTEL_BSP_SCHEDULE_DELAY, any number to the SDK, must be whole
 * milliseconds from 1; and `grpc`, a protocol the SDK offers, is refused (OTLP over HTTP only here).
 */
function tracingOf(variables: Variables) {
  const endpoint = variables.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? variables.OTEL_EXPORTER_OTLP_ENDPOINT
  if (endpoint === undefined) return undefined
  const resourceNamesService = resourceAttributesOf(variables.OTEL_RESOURCE_ATTRIBUTES ?? '')?.has(
    'service.name',
  )
  return {
    /** OTEL_SERVICE_NAME, then OTEL_RESOURCE_ATTRIBUTES' (undefined: the SDK reads it), then petstore. */
    serviceName: variables.OTEL_SERVICE_NAME ?? (resourceNamesService ? undefined : 'petstore'),
    /** OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL: the signal's own wins. */
    protocol: variables.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? variables.OTEL_EXPORTER_OTLP_PROTOCOL,
    sampler: variables.OTEL_TRACES_SAMPLER,
    /** The share a `*traceidratio` sampler keeps: 1 unless set, as the SDK defaults it. */
    ratio: variables.OTEL_TRACES_SAMPLER_ARG ?? 1,
  }
}

function databaseOf(variables: Variables) {
  const url = variables.DATABASE_URL
  const timeoutMs = variables.PETSTORE_DB_TIMEOUT_MS
  if (url.startsWith('sqlite:'))
    return { kind: 'sqlite' as const, path: url.slice('sqlite:'.length), timeoutMs }
  return { kind: 'postgres' as const, url, poolSize: variables.PETSTORE_DB_POOL_SIZE, timeoutMs }
}

function trustProxyOf(text: string): boolean | number | readonly string[] {
  if (text === 'false' || text === 'true') return text === 'true'
  const hops = text.length <= 2 ? parseInteger(text) : Number.NaN
  return Number.isNaN(hops) ? listOf(text) : hops
}
