import { existsSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { freePort, get, logLine, serviceFixture, waitUntilHealthy } from './service-process.js'

const fixture = serviceFixture()
const startService = fixture.start

describe('start-up configuration', () => {
  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PETSTORE_ENV', 'prod'],
    ['DATABASE_URL', 'mysql://x'],
    ['LOG_LEVEL', 'loud'],
    ['CORS_ORIGINS', 'not-an-origin'],
    ['PETSTORE_PUBLIC_URL', 'https://x.example/v2'],
    ['METRICS_PORT', '-1'],
  ])('stops with exit code 1 and one line naming %s when it is %j', async (variable, value) => {
    const service = await startService({ [variable]: value })
    expect(await service.exited).toBe(1)
    const lines = service.stderr().split('\n').filter(Boolean)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(variable)
    expect(lines[0]).toContain(JSON.stringify(value))
    expect(service.stderr()).not.toMatch(/^\s+at /m)
    expect(service.stdout()).toBe('')
    expect(existsSync(join(fixture.state.dir, 'petstore.sqlite'))).toBe(false)
  })
})

describe('a good start', () => {
  it('serves /healthz and creates and migrates the SQLite file', async () => {
    const service = await startService({ LOG_LEVEL: 'silent' })
    await waitUntilHealthy(service)
    const health = await get(service.port, '/healthz')
    expect(health.status).toBe(200)
    expect(JSON.parse(health.body)).toEqual({ status: 'ok' })
    expect((await get(service.port, '/readyz')).status).toBe(200)
    const db = new Database(join(fixture.state.dir, 'petstore.sqlite'), { readonly: true })
    const tables = db.prepare("select name from sqlite_master where type = 'table'").pluck().all()
    db.close()
    expect(tables).toEqual(expect.arrayContaining(['pets', 'api_keys', 'idempotency_keys']))
  })

  it('logs once which database it serves from, by its absolute path', async () => {
    const service = await startService({ LOG_LEVEL: 'info' })
    await waitUntilHealthy(service)
    // Served requests are logged too: once the first of them is written, the start-up lines are all out.
    await logLine(service, (line) => line.msg === 'request completed')
    const lines = service
      .stdout()
      .split('\n')
      .filter((line) => line.includes('"serving from this database"'))
      .map((line) => JSON.parse(line))
    expect(lines).toEqual([
      expect.objectContaining({ database: `sqlite:${join(fixture.state.dir, 'petstore.sqlite')}` }),
    ])
  })
})

describe('METRICS_PORT', () => {
  it('serves /metrics on its own port and not on the API port', async () => {
    const metricsPort = await freePort()
    const service = await startService({ LOG_LEVEL: 'silent', METRICS_PORT: String(metricsPort) })
    await waitUntilHealthy(service)
    const metrics = await get(metricsPort, '/metrics')
    expect(metrics.status).toBe(200)
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/)
    expect(metrics.body).toContain('petstore_http_requests_total')
    expect(metrics.body).toMatch(/^petstore_http_requests_total\{[^}]*route="\/healthz"[^}]*\} [1-9]/m)
    const api = await get(service.port, '/metrics')
    expect(api.status).toBe(404)
    expect(api.headers['content-type']).toMatch(/^application\/json/)
    const error = JSON.parse(api.body)
    expect(error).toMatchObject({ code: 'not_found', status: 404, message: expect.any(String) })
    const allowed = ['code', 'message', 'status', 'requestId']
    expect(Object.keys(error).filter((field) => !allowed.includes(field))).toEqual([])
  })
})
