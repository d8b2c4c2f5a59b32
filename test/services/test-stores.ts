import { randomBytes } from 'node:crypto'
import pg from 'pg'

/** The servers `npm run test:services` started: a database per test app, a Redis key prefix per app. */

const adminUrl = process.env.TEST_POSTGRES_URL
const redisUrl = process.env.TEST_REDIS_URL
if (!adminUrl || !redisUrl) {
  throw new Error(
    'TEST_POSTGRES_URL or TEST_REDIS_URL is not set: run these suites with `npm run test:services`',
  )
}

/** The test Redis with a key prefix of its own (ioredis reads `keyPrefix` from the URL's query). */
export function isolatedRedisUrl(): string {
  const url = new URL(redisUrl ?? '')
  url.searchParams.set('keyPrefix', `${randomBytes(6).toString('hex')}:`)
  return url.toString()
}

/** A fresh database on the test server, and a way to drop it. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `petstore_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(adminUrl ?? '')
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl })
      await client.connect()
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await client.end()
    },
  }
}

/**
 * The environment of service processes that deliver webhooks over `databaseUrl` and an isolated Redis:
 * loopback receivers allowed, retries compressed 1000 times, a 2 s attempt deadline.
 */
export function webhookInstancesEnv(databaseUrl: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL: isolatedRedisUrl(),
    LOG_LEVEL: 'warn',
    PETSTORE_WEBHOOKS_ALLOW_PRIVATE: '1',
    PETSTORE_WEBHOOK_RETRY_SCALE: '0.001',
    PETSTORE_WEBHOOK_TIMEOUT_MS: '2000',
  }
}
