import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { createDeps } from '../src/deps.js'
import { seedDatabase } from './lib.js'

const path = join(mkdtempSync(join(tmpdir(), 'm-')), 'm.sqlite')
const key = await seedDatabase(path, 100_000)
let inAll = 0n
const bySql = new Map<string, bigint>()
const sp = Object.getPrototypeOf(new SQLite(':memory:').prepare('select 1'))
const orig = sp.all
sp.all = function (...a: unknown[]) {
  const t = process.hrtime.bigint()
  const r = orig.apply(this, a)
  const d = process.hrtime.bigint() - t
  inAll += d
  bySql.set(this.source.slice(0, 40), (bySql.get(this.source.slice(0, 40)) ?? 0n) + d)
  return r
}
for (const level of ['silent', 'info']) {
  const deps = await createDeps(loadConfig({ DATABASE_URL: `sqlite:${path}`, LOG_LEVEL: level }), {
    logDestination: { write() {} } as never,
  })
  const app = await buildApp(deps)
  await app.ready()
  const headers = { authorization: `Bearer ${key}` }
  for (let i = 0; i < 3000; i++) await app.inject({ method: 'GET', url: '/v1/pets?limit=20', headers })
  inAll = 0n
  bySql.clear()
  const n = 10000
  const t = process.hrtime.bigint()
  for (let i = 0; i < n; i++) await app.inject({ method: 'GET', url: '/v1/pets?limit=20', headers })
  const total = Number(process.hrtime.bigint() - t) / n / 1000
  console.log(
    level,
    'per request µs',
    total.toFixed(1),
    'in stmt.all µs',
    (Number(inAll) / n / 1000).toFixed(1),
  )
  for (const [k, v] of bySql) console.log('   ', k, (Number(v) / n / 1000).toFixed(1))
  await app.close()
  await deps.close()
}
