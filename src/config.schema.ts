import Type from 'typebox'

/**
 * Every environment variable the service reads, as one TypeBox schema: its type and bounds, its default,
 * and the text of the README's table and of `.env.example` (`npm run config:docs` writes both from here).
 * `x-unset` says what an optional variable without a default means when it is not set.
 */

/** OTLP over HTTP only: every collector and vendor takes it, so gRPC (`grpc`) is not offered. */
const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const

const port = (description: string, options: object = {}) =>
  Type.Integer({ minimum: 0, maximum: 65535, description, ...options })
const count = (description: string, fallback: number) =>
  Type.Integer({ minimum: 1, maximum: 999_999_999, default: fallback, description })
const text = (format: string, description: string, options: object = {}) =>
  Type.String({ format, description, ...options })

export const ConfigSchema = Type.Object({
  PORT: port('where to listen', { default: 8080 }),
  HOST: text('petstore.host', 'the address to listen on', { default: '127.0.0.1' }),
  PETSTORE_ENV: Type.Enum(['production', 'staging'], {
    default: 'production',
    description: 'the key prefix accepted and issued: `ps_live_` or `ps_test_`',
  }),
  DATABASE_URL: text('petstore.database-url', '`sqlite:<path>` or `postgres://user@host:port/db`', {
    default: 'sqlite:./data/petstore.sqlite',
  }),
  PETSTORE_DB_POOL_SIZE: count('PostgreSQL connections per instance', 10),
  PETSTORE_DB_TIMEOUT_MS: count(
    'longest wait for the database on one request (pool, lock, query); then 503',
    2000,
  ),
  PETSTORE_PUBLIC_URL: Type.Optional(
    text(
      'petstore.base-url',
      'base address ending in `/v1` for `Link` headers and the first OpenAPI server',
      {
        'x-unset': "derived from each request's `Host`",
      },
    ),
  ),
  // No default: a made-up address would send "Try it out" to a server that is not ours.
  PETSTORE_PRODUCTION_URL: Type.Optional(
    text('petstore.base-url', "the production environment's base address in the OpenAPI `servers`", {
      'x-unset': 'listed as the template `{base_url}`, preset to a placeholder',
    }),
  ),
  PETSTORE_STAGING_URL: Type.Optional(
    text('petstore.base-url', "the staging environment's base address in the OpenAPI `servers`", {
      'x-unset': 'listed as the template `{staging_base_url}`, preset to a placeholder',
    }),
  ),
  CORS_ORIGINS: Type.Optional(
    text('petstore.origins', 'comma list of origins whose browser code may call the API', {
      'x-unset': 'no CORS',
    }),
  ),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    default: 'info',
    description: 'pino level',
  }),
  METRICS_PORT: Type.Optional(
    port('serve `/metrics` on this port instead of the API port (must differ from `PORT`)', {
      'x-unset': 'on the API port',
    }),
  ),
  PETSTORE_BAN_AFTER: count(
    '429s inside one window after which the next refusal bans the key (or client IP)',
    10,
  ),
  PETSTORE_BAN_SECONDS: count('length of a ban', 900),
  PETSTORE_PUBLIC_PER_MINUTE: count(
    'requests per minute and client IP to the documentation (`/v1/openapi.json`, `/v1/docs`), which needs no key',
    600,
  ),
  TRUST_PROXY: text(
    'petstore.trust-proxy',
    'whose `X-Forwarded-For` gives the client IP: `false`, `true`, a hop count, or a comma list of proxy addresses/CIDRs',
    { default: 'false' },
  ),
  REDIS_URL: Type.Optional(
    text(
      'petstore.redis-url',
      '`redis://` or `rediss://`: rate-limit state lives there, shared by every instance; it must answer at start-up',
      {
        'x-unset': 'in-process',
      },
    ),
  ),
  PETSTORE_REDIS_TIMEOUT_MS: count(
    'longest wait for Redis on one rate-limit decision; then the in-process limiter decides',
    100,
  ),
  PETSTORE_HEADERS_TIMEOUT_MS: count(
    "longest a request's line and headers may take to arrive; then 408 and the connection is closed",
    10_000,
  ),
  PETSTORE_REQUEST_TIMEOUT_MS: count('longest a whole request (headers and body) may take to arrive', 30_000),
  PETSTORE_DRAIN_SECONDS: count(
    'on SIGTERM, longest the service waits for requests in flight before it closes their connections and exits',
    10,
  ),
  PETSTORE_WEBHOOK_TIMEOUT_MS: count(
    'longest one webhook attempt may take (lookup, connect, answer); then it counts as failed',
    15_000,
  ),
  PETSTORE_WEBHOOK_THREAD_NICE: Type.Integer({
    minimum: 0,
    maximum: 19,
    default: 10,
    description:
      "how many nice levels below the process the webhook dispatcher's thread runs (Linux): where every core is busy, requests go first and deliveries take what they leave; `0`, an equal share",
  }),
  PETSTORE_WEBHOOK_RETRY_SCALE: Type.Number({
    exclusiveMinimum: 0,
    maximum: 1000,
    default: 1,
    description:
      'multiplies every webhook delay (the retry schedule, `Retry-After`, the 5 days before a failing endpoint is disabled): for tests',
  }),
  PETSTORE_WEBHOOKS_ALLOW_PRIVATE: Type.Enum(['0', '1'], {
    default: '0',
    description:
      '`1` lets webhook URLs reach any address, over plain `http` too: for development and tests only (start-up warns)',
  }),
  // OpenTelemetry's own variables (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/):
  // the SDK reads them; they are listed and checked here so a bad value stops start-up with one line. Only
  // those the service reads are checked (config.ts, `readOtel`): none while tracing is off, and not a
  // general one whose traces-only variant is set, as a shared environment sets them for other components.
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(
    text(
      'petstore.otlp-url',
      'OTLP/HTTP receiver (a collector) of traces: setting it turns tracing on; `/v1/traces` is appended. While tracing is off no `OTEL_*` variable is read, so none is checked',
      {
        'x-unset': 'tracing off (unless the next variable is set): no OpenTelemetry SDK is loaded',
      },
    ),
  ),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Type.Optional(
    text(
      'petstore.otlp-url',
      'the full URL traces are posted to; turns tracing on too, and wins over the previous variable, which is then not read (nor checked)',
      {
        'x-unset': 'the previous variable with `/v1/traces`',
      },
    ),
  ),
  OTEL_SDK_DISABLED: text(
    'petstore.otel-boolean',
    '`true` (in any case) keeps tracing off whatever the endpoint variables say',
    { default: 'false' },
  ),
  OTEL_EXPORTER_OTLP_PROTOCOL: Type.Enum(OTLP_PROTOCOLS, {
    default: 'http/protobuf',
    description: 'how spans are sent to the receiver',
  }),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: Type.Optional(
    Type.Enum(OTLP_PROTOCOLS, {
      description:
        'the same, by its traces-only name; wins over the previous variable, which is then not read (nor checked)',
      'x-unset': 'the previous variable',
    }),
  ),
  OTEL_SERVICE_NAME: Type.Optional(
    Type.String({
      minLength: 1,
      description: "the traces' `service.name`",
      'x-unset': '`service.name` of OTEL_RESOURCE_ATTRIBUTES when it names one, else `petstore`',
    }),
  ),
  OTEL_RESOURCE_ATTRIBUTES: Type.Optional(
    text(
      'petstore.otel-resource',
      "more attributes of every span's resource, `key=value,key=value` (`deployment.environment.name=staging`)",
      {
        'x-unset': 'the service name, the host and the process only',
      },
    ),
  ),
  OTEL_EXPORTER_OTLP_HEADERS: Type.Optional(
    text(
      'petstore.otel-headers',
      "headers sent with every export, `key=value,key=value` percent-encoded (a vendor's token: `api-key=…`)",
      { 'x-unset': 'none', 'x-secret': true },
    ),
  ),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: Type.Optional(
    text(
      'petstore.otel-headers',
      'more headers for traces only, over the previous ones (a key in both: this one)',
      {
        'x-unset': 'none',
        'x-secret': true,
      },
    ),
  ),
  OTEL_TRACES_SAMPLER: Type.Enum(
    [
      'parentbased_always_on',
      'parentbased_always_off',
      'parentbased_traceidratio',
      'always_on',
      'always_off',
      'traceidratio',
    ],
    {
      default: 'parentbased_always_on',
      description:
        'which traces are kept: `parentbased_*` follows an incoming `traceparent`, `traceidratio` keeps the share `OTEL_TRACES_SAMPLER_ARG`',
    },
  ),
  OTEL_TRACES_SAMPLER_ARG: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 1,
      description: 'the share of traces a `*traceidratio` sampler keeps (`0.01`: 1%)',
      'x-unset': '1: every trace',
    }),
  ),
  OTEL_BSP_SCHEDULE_DELAY: Type.Integer({
    minimum: 1,
    maximum: 999_999_999,
    default: 5000,
    description: 'milliseconds between two exports of the queued spans',
  }),
})

/** What the loader and the docs read of a variable's schema. */
export interface VariableSchema {
  type?: string
  enum?: readonly string[]
  minimum?: number
  maximum?: number
  format?: string
  default?: string | number
  description: string
  'x-unset'?: string
  /** Its value may hold credentials: an error about it never shows it. */
  'x-secret'?: boolean
}

/** Every variable, in the order of the schema. */
export const CONFIG_VARIABLES = Object.entries(ConfigSchema.properties) as unknown as [
  string,
  VariableSchema,
][]
