import { readFileSync } from 'node:fs'
import { describe, expect, test } from 'vitest'
import YAML from 'yaml'
import { loadConfig } from '../src/config.js'
import { CONFIG_VARIABLES } from '../src/config.schema.js'

/**
 * The container recipe, checked as far as it can be without a Docker engine (none exists here): the
 * Dockerfile's promises (multi-stage on Node 24.18 slim, not root, a health check on /healthz, exec form, a
 * volume for the SQLite file), compose.yaml's services, ports and health checks, and that every variable
 * it sets is one the service reads.
 */
const dockerfile = readFileSync('Dockerfile', 'utf8')
/** Instructions with their continuation lines joined, comments dropped. */
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'))
const TRACING_ENDPOINT = '$' + '{OTEL_EXPORTER_OTLP_ENDPOINT:-}'
const compose = YAML.parse(readFileSync('compose.yaml', 'utf8'), { merge: true })
const haproxy = readFileSync('deploy/haproxy.cfg', 'utf8')
const variables = new Set(CONFIG_VARIABLES.map(([name]) => name))
/** Both stages start from the image the NODE_IMAGE build argument names. */
const FROM_IMAGE = 'FROM $' + '{NODE_IMAGE}'

describe('Dockerfile', () => {
  test('builds in one stage and runs in another, both on Node 24 slim (24.18: see the Dockerfile)', () => {
    expect(instructions[0]).toBe('ARG NODE_IMAGE=node:24.18-slim')
    const from = instructions.filter((line) => line.startsWith('FROM '))
    expect(from).toEqual([`${FROM_IMAGE} AS build`, FROM_IMAGE])
    expect(instructions).toContain('COPY --from=build /app/dist/ dist/')
  })

  test('the build stage has every input of npm run build: the client, the sources, the dashboard and the build scripts', () => {
    for (const input of ['client/ client/', 'src/ src/', 'dashboard/ dashboard/'])
      expect(instructions).toContain(`COPY ${input}`)
    const build: string = JSON.parse(readFileSync('package.json', 'utf8')).scripts.build
    const scripts = [...build.matchAll(/scripts\/[\w-]+\.ts/g)].map(([path]) => path)
    expect(scripts).toEqual(['scripts/build-dashboard.ts', 'scripts/build-cli.ts'])
    const copied = instructions.find((line) => line.startsWith('COPY scripts/')) ?? ''
    for (const script of scripts) expect(copied.split(' ')).toContain(script)
  })

  test('runs as a user that is not root, with the SQLite file in a volume', () => {
    const runStage = instructions.slice(instructions.indexOf(FROM_IMAGE))
    expect(runStage).toContain('USER node')
    expect(runStage).toContain('VOLUME ["/data"]')
    const env = runStage.find((line) => line.startsWith('ENV ')) ?? ''
    expect(env).toContain('DATABASE_URL=sqlite:/data/petstore.sqlite')
    for (const [, name] of env.matchAll(/(\w+)=/g)) if (name !== 'NODE_ENV') expect(variables).toContain(name)
  })

  test('checks /healthz and starts node in exec form, so SIGTERM reaches it', () => {
    const healthcheck = instructions.find((line) => line.startsWith('HEALTHCHECK ')) ?? ''
    expect(healthcheck).toContain("fetch('http://127.0.0.1:' + process.env.PORT + '/healthz')")
    const cmd = instructions.filter((line) => line.startsWith('CMD '))
    expect(cmd).toEqual([`CMD ["node", "${V8_SETTING}", "dist/main.js"]`])
    expect(JSON.parse(cmd[0]?.slice(4) ?? '')).toEqual(['node', V8_SETTING, 'dist/main.js'])
  })
})

/** The young generation's bound that keeps a busy instance's memory low (docs/performance.md). */
const V8_SETTING = '--max-semi-space-size=4'

test('every default way to start the service carries the same V8 setting: npm start, bin/petstore, the image', () => {
  const scripts = JSON.parse(readFileSync('package.json', 'utf8')).scripts
  expect(scripts.start).toBe(`exec node ${V8_SETTING} dist/main.js`)
  expect(readFileSync('bin/petstore', 'utf8').split('\n')[0]).toBe(`#!/usr/bin/env -S node ${V8_SETTING}`)
  expect(dockerfile).toContain(`CMD ["node", "${V8_SETTING}", "dist/main.js"]`)
})

describe('compose.yaml', () => {
  test('has PostgreSQL, Redis, two instances and a load balancer, with health checks', () => {
    const always = Object.entries<{ healthcheck?: { test: string[] }; profiles?: string[] }>(
      compose.services,
    ).filter(([, service]) => service.profiles === undefined)
    expect(always.map(([name]) => name).sort()).toEqual(['api1', 'api2', 'lb', 'postgres', 'redis'])
    for (const [name, service] of always)
      expect(service.healthcheck?.test, name).toEqual(expect.arrayContaining(['CMD']))
    // Compose reads `${...}` as one of its own variables: only the tracing endpoint is meant to be one.
    const interpolated = readFileSync('compose.yaml', 'utf8').match(/(?<!\$)\$\{[^}]*\}/g)
    expect(interpolated).toEqual([TRACING_ENDPOINT])
    expect(compose.services.api1.image).toBe('petstore:local')
    expect(compose.services.lb.ports).toEqual(['8080:8080'])
    for (const name of ['api1', 'api2']) {
      expect(compose.services[name].ports, `${name} is reached through the balancer only`).toBeUndefined()
      expect(compose.services[name].depends_on.postgres.condition).toBe('service_healthy')
    }
  })

  test('sets only variables the service reads, and points the instances at the shared stores', () => {
    for (const name of ['api1', 'api2']) {
      const environment: Record<string, string> = compose.services[name].environment
      for (const variable of Object.keys(environment)) expect(variables, variable).toContain(variable)
      expect(environment.DATABASE_URL).toMatch(/^postgres:\/\/.*@postgres:5432\//)
      expect(environment.REDIS_URL).toBe('redis://redis:6379')
      expect(environment.HOST).toBe('0.0.0.0')
    }
  })

  test('the tracing profile adds Jaeger; the instances export to it only when the endpoint is given', () => {
    expect(compose.services.jaeger).toMatchObject({ profiles: ['tracing'], ports: ['16686:16686'] })
    expect(compose.services.jaeger.image).toMatch(/jaeger:\d+\.\d+\.\d+$/)
    // The command the header gives sets both: either alone traces nothing.
    expect(readFileSync('compose.yaml', 'utf8')).toContain(
      '#   OTEL_EXPORTER_OTLP_ENDPOINT=http://jaeger:4318 docker compose --profile tracing up --build\n',
    )
    for (const name of ['api1', 'api2']) {
      // Started after Jaeger when the profile runs it; without the profile, not waiting for it.
      expect(compose.services[name].depends_on.jaeger).toEqual({
        condition: 'service_started',
        required: false,
      })
      const environment: Record<string, string> = compose.services[name].environment
      expect(environment.OTEL_EXPORTER_OTLP_ENDPOINT).toBe(TRACING_ENDPOINT)
      // Without the profile compose leaves it empty: OpenTelemetry reads an empty variable as unset.
      const off = loadConfig({ ...environment, OTEL_EXPORTER_OTLP_ENDPOINT: '' })
      expect(off.tracing).toBeUndefined()
      const on = loadConfig({ ...environment, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318' })
      expect(on.tracing).toEqual({
        serviceName: 'petstore',
        protocol: 'http/protobuf',
        sampler: 'parentbased_always_on',
        ratio: 1,
      })
    }
  })

  test('the balancer sends traffic to both instances, checked on /readyz', () => {
    expect(compose.services.lb.volumes).toContain(
      './deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro',
    )
    expect(haproxy).toContain('option httpchk GET /readyz')
    expect(haproxy).toMatch(/server api1 api1:8080/)
    expect(haproxy).toMatch(/server api2 api2:8080/)
    expect(haproxy).toMatch(/bind :8080/)
    // A dead instance's requests go to the other when that is safe (test/services/balancer.test.ts).
    expect(haproxy).toMatch(/^ {2}option redispatch 1$/m)
    expect(haproxy).toMatch(/^ {2}retry-on conn-failure empty-response$/m)
    expect(haproxy).toMatch(/disable-l7-retry unless idempotent \|\| METH_POST has_idempotency_key/)
    expect(haproxy).toMatch(/observe layer4 error-limit 1 on-error mark-down/)
  })
})
