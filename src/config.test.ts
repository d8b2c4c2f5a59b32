import { getNumberFromEnv } from '@opentelemetry/core'
import { describe, expect, test, vi } from 'vitest'
import { ConfigError, loadConfig } from './config.js'

describe('loadConfig', () => {
  test('defaults match the contract', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      env: 'production',
      database: { kind: 'sqlite', path: './data/petstore.sqlite', timeoutMs: 2000 },
      publicUrl: undefined,
      corsOrigins: [],
      logLevel: 'info',
      metricsPort: undefined,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
    })
    expect(Object.isFrozen(config)).toBe(true)
  })

  test('parses every variable', () => {
    const config = loadConfig({
      PORT: '0',
      HOST: '0.0.0.0',
      PETSTORE_ENV: 'staging',
      DATABASE_URL: 'sqlite:/tmp/x.sqlite',
      PETSTORE_PUBLIC_URL: 'https://api.shop.example/v1/',
      CORS_ORIGINS: 'https://a.example, http://localhost:3000',
      LOG_LEVEL: 'warn',
      METRICS_PORT: '9100',
      PETSTORE_BAN_AFTER: '3',
      PETSTORE_BAN_SECONDS: '60',
      TRUST_PROXY: '10.0.0.0/8, ::1',
      PETSTORE_PRODUCTION_URL: 'https://api.shop.example/v1',
      PETSTORE_STAGING_URL: 'https://staging.shop.example/v1',
      REDIS_URL: 'redis://10.0.0.5:6380/0',
    })
    expect(config).toMatchObject({
      port: 0,
      host: '0.0.0.0',
      env: 'staging',
      database: { path: '/tmp/x.sqlite' },
      publicUrl: 'https://api.shop.example/v1',
      corsOrigins: ['https://a.example', 'http://localhost:3000'],
      logLevel: 'warn',
      metricsPort: 9100,
      banAfter: 3,
      banSeconds: 60,
      trustProxy: ['10.0.0.0/8', '::1'],
      productionUrl: 'https://api.shop.example/v1',
      stagingUrl: 'https://staging.shop.example/v1',
      redisUrl: 'redis://10.0.0.5:6380/0',
    })
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true)
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2)
    expect(loadConfig({}).trustProxy).toBe(false)
  })

  test.each([
    ['PORT', '80a'],
    ['PORT', '65536'],
    ['PORT', ''],
    ['HOST', 'a b'],
    ['PETSTORE_ENV', 'prod'],
    ['DATABASE_URL', 'mysql://db/petstore'],
    ['DATABASE_URL', 'postgres://exa mple/db'],
    ['DATABASE_URL', 'sqlite:'],
    ['DATABASE_URL', 'sqlite::memory:'],
    ['PETSTORE_DB_POOL_SIZE', '0'],
    ['PETSTORE_BAN_SECONDS', '1000000000'],
    ['PETSTORE_PUBLIC_URL', 'https://api.example/v2'],
    ['PETSTORE_PUBLIC_URL', 'ftp://api.example/v1'],
    ['PETSTORE_STAGING_URL', 'not a url'],
    ['CORS_ORIGINS', 'https://a.example/path'],
    ['LOG_LEVEL', 'verbose'],
    ['METRICS_PORT', 'x'],
    ['HOST', '999.1.1.1'],
    ['PETSTORE_BAN_AFTER', '0'],
    ['PETSTORE_BAN_AFTER', 'ten'],
    ['PETSTORE_BAN_SECONDS', '-5'],
    ['TRUST_PROXY', 'yes'],
    ['TRUST_PROXY', '10.0.0.0/99'],
    ['TRUST_PROXY', '::1/129'],
    ['PETSTORE_PRODUCTION_URL', 'https://api.example/'],
    ['REDIS_URL', 'http://cache:6379'],
    ['REDIS_URL', 'not a url'],
    ['PETSTORE_HEADERS_TIMEOUT_MS', '0'],
    ['PETSTORE_REQUEST_TIMEOUT_MS', '30s'],
    // The SDK would append `/v1/traces` after the space, fail to parse it, and export to localhost.
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'http://collector:4318 '],
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', ' http://collector:4318/v1/traces'],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'http://collec\ttor:4318'],
    // A parser drops the space; the service would use the text as given (Link headers, the document).
    ['PETSTORE_PUBLIC_URL', 'https://api.example/v1 '],
    ['PETSTORE_STAGING_URL', ' https://staging.example/v1'],
    ['REDIS_URL', 'redis://cache:6379\n'],
    ['DATABASE_URL', 'postgres://db.example/petstore '],
  ])('a bad %s (%s) is one ConfigError line naming the variable', (name, value) => {
    const load = () => loadConfig({ [name]: value })
    expect(load).toThrow(ConfigError)
    expect(load).toThrow(new RegExp(`^${name} .*\\(got ".*"\\)$`))
  })

  test("a SQLite file's path may hold spaces", () => {
    expect(loadConfig({ DATABASE_URL: 'sqlite:./my data/pets.db' }).database).toMatchObject({
      kind: 'sqlite',
      path: './my data/pets.db',
    })
  })

  test('a URL that is refused is named without its password', () => {
    // An unencoded `/` in the password: the value does not parse, and must still not be echoed whole.
    const load = () => loadConfig({ DATABASE_URL: 'postgres://shop:s3cr/et@db/petstore' })
    expect(load).toThrow(ConfigError)
    expect(load).toThrow(/\(got "postgres:\/\/shop:\*\*\*@db\/petstore"\)$/)
    expect(load).not.toThrow(/s3cr/)
  })

  test('a postgres:// DATABASE_URL takes its pool size and the database deadline', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://db.example/petstore', PETSTORE_DB_POOL_SIZE: '4' })
    expect(config.database).toEqual({
      kind: 'postgres',
      url: 'postgres://db.example/petstore',
      poolSize: 4,
      timeoutMs: 2000,
    })
    expect(() => loadConfig({ PETSTORE_DB_STATEMENT_TIMEOUT_MS: '5000' })).toThrow(
      /^PETSTORE_DB_STATEMENT_TIMEOUT_MS was replaced by PETSTORE_DB_TIMEOUT_MS/,
    )
    expect(() => loadConfig({ DATABASE_URL: 'postgres://db/x', PETSTORE_DB_POOL_SIZE: '0' })).toThrow(
      /^PETSTORE_DB_POOL_SIZE/,
    )
  })

  test('the headers timeout cannot exceed the request timeout', () => {
    const env = { PETSTORE_HEADERS_TIMEOUT_MS: '5000', PETSTORE_REQUEST_TIMEOUT_MS: '4000' }
    expect(() => loadConfig(env)).toThrow(/^PETSTORE_HEADERS_TIMEOUT_MS must not exceed/)
  })

  test('METRICS_PORT must differ from PORT', () => {
    expect(() => loadConfig({ PORT: '9000', METRICS_PORT: '9000' })).toThrow(
      /^METRICS_PORT must differ from PORT/,
    )
  })

  test('webhooks: defaults, a fractional scale, bad values named, and a warning when private addresses are allowed', () => {
    expect(loadConfig({}).webhooks).toEqual({
      timeoutMs: 15_000,
      retryScale: 1,
      threadNice: 10,
      allowPrivate: false,
    })
    expect(loadConfig({ PETSTORE_WEBHOOK_THREAD_NICE: '0' }).webhooks.threadNice).toBe(0)
    for (const nice of ['-1', '20', '2.5']) {
      expect(() => loadConfig({ PETSTORE_WEBHOOK_THREAD_NICE: nice }), nice).toThrow(
        /^PETSTORE_WEBHOOK_THREAD_NICE must be/,
      )
    }
    expect(loadConfig({}).warnings).toEqual([])
    const config = loadConfig({ PETSTORE_WEBHOOK_RETRY_SCALE: '0.001', PETSTORE_WEBHOOKS_ALLOW_PRIVATE: '1' })
    expect(config.webhooks).toMatchObject({ retryScale: 0.001, allowPrivate: true })
    expect(config.warnings).toEqual([
      expect.stringMatching(/^PETSTORE_WEBHOOKS_ALLOW_PRIVATE=1: .*never in production/),
    ])
    for (const scale of ['0', '-1', 'abc', '1e9', '']) {
      expect(() => loadConfig({ PETSTORE_WEBHOOK_RETRY_SCALE: scale }), scale).toThrow(
        /^PETSTORE_WEBHOOK_RETRY_SCALE must be a number above 0, at most 1000/,
      )
    }
    expect(() => loadConfig({ PETSTORE_WEBHOOKS_ALLOW_PRIVATE: 'yes' })).toThrow(
      /^PETSTORE_WEBHOOKS_ALLOW_PRIVATE must be one of 0, 1/,
    )
  })

  test('tracing: on with an endpoint unless OTEL_SDK_DISABLED is true in any case; the service name as OpenTelemetry ranks it; bad values named', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }
    expect(loadConfig({}).tracing).toBeUndefined()
    expect(loadConfig(endpoint).tracing).toMatchObject({ serviceName: 'petstore', protocol: 'http/protobuf' })
    for (const disabled of ['true', 'TRUE', 'True'])
      expect(loadConfig({ ...endpoint, OTEL_SDK_DISABLED: disabled }).tracing, disabled).toBeUndefined()
    expect(loadConfig({ ...endpoint, OTEL_SDK_DISABLED: 'FALSE' }).tracing).toBeDefined()
    expect(() => loadConfig({ ...endpoint, OTEL_SDK_DISABLED: 'yes' })).toThrow(/^OTEL_SDK_DISABLED must be/)
    // OTEL_SERVICE_NAME first, then OTEL_RESOURCE_ATTRIBUTES' (left to the SDK to read), then petstore.
    const named = {
      ...endpoint,
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=staging,service.name=shop',
    }
    expect(loadConfig(named).tracing?.serviceName).toBeUndefined()
    expect(loadConfig({ ...named, OTEL_SERVICE_NAME: 'orders' }).tracing?.serviceName).toBe('orders')
    const other = { ...endpoint, OTEL_RESOURCE_ATTRIBUTES: 'my.service.name=x' }
    expect(loadConfig(other).tracing?.serviceName).toBe('petstore')
    expect(() => loadConfig({ ...endpoint, OTEL_TRACES_SAMPLER: 'sometimes' })).toThrow(
      /^OTEL_TRACES_SAMPLER must be/,
    )
    // What the SDK would discard whole, taking a service.name given there with it, stops the start-up.
    for (const attributes of [
      'service.name=shop,note=a=b',
      'service.name=100%',
      '=x',
      `k=${'v'.repeat(256)}`,
    ])
      expect(() => loadConfig({ ...endpoint, OTEL_RESOURCE_ATTRIBUTES: attributes }), attributes).toThrow(
        /^OTEL_RESOURCE_ATTRIBUTES must be a comma list of key=value pairs/,
      )
    const spaced = { ...endpoint, OTEL_RESOURCE_ATTRIBUTES: ' service.name = a%2Cb ' }
    expect(loadConfig(spaced).tracing?.serviceName).toBeUndefined()
  })

  test('tracing: an export header the SDK would drop without a word stops start-up, and its value (a token) is never shown', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }
    for (const name of ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'])
      for (const headers of [
        'Authorization: Bearer s3cret',
        'api-key=s3cret,x-team',
        '=s3cret',
        'api-key=',
        'api-key=s3cret%zz',
      ]) {
        const load = () => loadConfig({ ...endpoint, [name]: headers })
        expect(load, headers).toThrow(
          `${name} must be a comma list of key=value pairs, ',' and '=' in them percent-encoded (its value is not shown)`,
        )
      }
    // What the SDK reads: trimmed, percent-decoded, `=` after the first one part of the value, empty entries skipped.
    for (const headers of [' Authorization = Bearer%20s3cret ', 'api-key=a=b,,x-team=store', 'k=v;meta'])
      expect(loadConfig({ ...endpoint, OTEL_EXPORTER_OTLP_HEADERS: headers }).tracing, headers).toBeDefined()
  })

  test('tracing: OTEL_TRACES_SAMPLER_ARG takes every ratio the SDK reads (`.01`, `1.`, `1e-2`); what the SDK would replace by 1 stops start-up', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }
    /** The ratio the SDK reads from the text (its own parser), when it would use it. */
    const sdkRatio = (text: string) => {
      vi.stubEnv('OTEL_TRACES_SAMPLER_ARG', text)
      try {
        const ratio = getNumberFromEnv('OTEL_TRACES_SAMPLER_ARG')
        return ratio !== undefined && ratio >= 0 && ratio <= 1 ? ratio : undefined
      } finally {
        vi.unstubAllEnvs()
      }
    }
    for (const text of ['0.01', '.01', '1.', '1e-2', '1E-2', '+0.5', ' 0.5 ', '0', '1', '0.0001']) {
      const ratio = loadConfig({ ...endpoint, OTEL_TRACES_SAMPLER_ARG: text }).tracing?.ratio
      expect(ratio, text).toBe(Number(text))
      expect(ratio, text).toBe(sdkRatio(text))
    }
    const refused = (text: string) =>
      expect(() => loadConfig({ ...endpoint, OTEL_TRACES_SAMPLER_ARG: text }), text).toThrow(
        /^OTEL_TRACES_SAMPLER_ARG must be a number from 0, at most 1 \(got/,
      )
    for (const text of ['abc', '1.5', '-0.1', '1e1', '   ', 'Infinity', '50%', '0,5', '0.5.1']) {
      expect(sdkRatio(text), text).toBeUndefined()
      refused(text)
    }
    // Texts `Number()` reads that are no decimal: the SDK takes them, the service (as for any number) not.
    for (const text of ['0x1', '0b1', '0o1']) refused(text)
    // Empty is unset, as for every OpenTelemetry variable: every trace, as the SDK defaults it.
    expect(loadConfig({ ...endpoint, OTEL_TRACES_SAMPLER_ARG: '' }).tracing?.ratio).toBe(1)
  })

  test('tracing: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL wins over OTEL_EXPORTER_OTLP_PROTOCOL, and takes the same values', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }
    const protocolOf = (env: Record<string, string>) => loadConfig({ ...endpoint, ...env }).tracing?.protocol
    expect(protocolOf({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' })).toBe('http/json')
    expect(
      protocolOf({
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      }),
    ).toBe('http/protobuf')
    expect(protocolOf({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBe('http/json')
    // Empty is unset, as for every OpenTelemetry variable.
    expect(
      protocolOf({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: '' }),
    ).toBe('http/json')
    for (const protocol of ['grpc', 'http', 'HTTP/JSON'])
      expect(() => protocolOf({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: protocol }), protocol).toThrow(
        /^OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be one of http\/protobuf, http\/json \(got/,
      )
    // The general one is checked only when it is the protocol in use: another component of a shared
    // environment may export its metrics over gRPC.
    const grpc = { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }
    expect(protocolOf({ ...grpc, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' })).toBe('http/json')
    expect(() => protocolOf(grpc)).toThrow(
      /^OTEL_EXPORTER_OTLP_PROTOCOL must be one of http\/protobuf, http\/json \(got "grpc"\)$/,
    )
    expect(() => protocolOf({ ...grpc, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: '' })).toThrow(
      /^OTEL_EXPORTER_OTLP_PROTOCOL must be one of/,
    )
  })

  test('tracing: an OpenTelemetry variable the service does not read is not checked, as another component of a shared environment may set it', () => {
    // Each refused while tracing is on: the service would use it.
    const unusable = {
      OTEL_TRACES_SAMPLER: 'xray',
      OTEL_TRACES_SAMPLER_ARG: 'abc',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc',
      OTEL_RESOURCE_ATTRIBUTES: '=x',
      OTEL_EXPORTER_OTLP_HEADERS: 'api-key',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'api-key',
      OTEL_BSP_SCHEDULE_DELAY: '0',
      OTEL_SDK_DISABLED: 'yes',
    }
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }
    for (const [name, value] of Object.entries(unusable)) {
      const variable = { [name]: value }
      expect(() => loadConfig({ ...endpoint, ...variable }), name).toThrow(new RegExp(`^${name} `))
      // Off without an endpoint, or with OTEL_SDK_DISABLED=true: none of them is read.
      expect(loadConfig(variable).tracing, name).toBeUndefined()
      if (name !== 'OTEL_SDK_DISABLED') {
        const disabled = { ...endpoint, OTEL_SDK_DISABLED: 'TRUE', ...variable }
        expect(loadConfig(disabled).tracing, name).toBeUndefined()
      }
    }
    // Off, the endpoints are not read either; on, the general one is not when the traces-only one is set.
    for (const notAUrl of [' http://collector:4318', 'collector:4318']) {
      expect(
        loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: notAUrl, OTEL_SDK_DISABLED: 'true' }).tracing,
      ).toBeUndefined()
      const traces = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }
      expect(loadConfig({ ...traces, OTEL_EXPORTER_OTLP_ENDPOINT: notAUrl }).tracing).toBeDefined()
      expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: notAUrl })).toThrow(
        /^OTEL_EXPORTER_OTLP_ENDPOINT /,
      )
    }
  })
})
