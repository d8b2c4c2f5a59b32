import { join } from 'node:path'
import { createApiKeyService } from '../src/api-keys/api-keys.service.js'
import { systemClock } from '../src/clock.js'
import { loadConfig } from '../src/config.js'
import { connectDatabase } from '../src/db/connect.js'
import type { DbHandle } from '../src/db/handle.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { openSqlite } from '../src/db/sqlite.js'
import { freshPostgresDatabase } from './lib.js'

/** Where a scene's fresh database comes from, with `keys` Enterprise keys out of reach (one account each). */
export interface Store {
  label: string
  fresh(keys: number): Promise<{ env: Record<string, string>; keys: string[] }>
}

async function issueKeys(handle: DbHandle, count: number): Promise<string[]> {
  await migrateToLatest(handle.db)
  const service = createApiKeyService({ handle, clock: systemClock, env: 'production' })
  const keys: string[] = []
  for (let i = 0; i < count; i++) {
    keys.push((await service.issueApiKey({ plan: 'enterprise', perMinute: 1e9, perDay: 1e9 })).key)
  }
  await handle.close()
  return keys
}

/** A new SQLite file in `dir` for each scene. */
export function sqliteStore(dir: string): Store {
  let made = 0
  return {
    label: 'SQLite',
    async fresh(count) {
      const path = join(dir, `scale-${++made}.sqlite`)
      return { env: { DATABASE_URL: `sqlite:${path}` }, keys: await issueKeys(openSqlite(path), count) }
    },
  }
}

/** The database `petstore_scale` on the server of `adminUrl`, made anew for each scene, and Redis. */
export function postgresStore(adminUrl: string, redisUrl: string): Store {
  return {
    label: 'PostgreSQL + Redis',
    async fresh(count) {
      const url = await freshPostgresDatabase(adminUrl, 'petstore_scale')
      const keys = await issueKeys(
        await connectDatabase(loadConfig({ DATABASE_URL: url }).database, false),
        count,
      )
      return { env: { DATABASE_URL: url, REDIS_URL: redisUrl }, keys }
    },
  }
}
