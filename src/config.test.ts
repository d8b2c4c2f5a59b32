import { describe, expect, test } from 'vitest'
import { ConfigError, loadConfig } from './config.js'

describe('loadConfig', () => {
  test('defaults match the contract', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      env: 'production',
      database: { kind: 'sqlite', path: './data/petstore.sqlite' },
      publicUrl: undefined,
      corsOrigins: [],
      logLevel: 'info',
      metricsPort: undefined,
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
    })
  })

  test.each([
    ['PORT', '80a'],
    ['PORT', '65536'],
    ['PORT', ''],
    ['HOST', 'a b'],
    ['PETSTORE_ENV', 'prod'],
    ['DATABASE_URL', 'postgres://db/petstore'],
    ['DATABASE_URL', 'sqlite:'],
    ['PETSTORE_PUBLIC_URL', 'https://api.example/v2'],
    ['PETSTORE_PUBLIC_URL', 'ftp://api.example/v1'],
    ['PETSTORE_STAGING_URL', 'not a url'],
    ['CORS_ORIGINS', 'https://a.example/path'],
    ['LOG_LEVEL', 'verbose'],
    ['METRICS_PORT', 'x'],
  ])('a bad %s (%s) is one ConfigError line naming the variable', (name, value) => {
    const load = () => loadConfig({ [name]: value })
    expect(load).toThrow(ConfigError)
    expect(load).toThrow(new RegExp(`^${name} .*\\(got ".*"\\)$`))
  })
})
