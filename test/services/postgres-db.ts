import { randomBytes } from 'node:crypto'
import pg from 'pg'

const adminUrl = process.env.TEST_POSTGRES_URL
if (!adminUrl) throw new Error('TEST_POSTGRES_URL is not set: run these suites with `npm run test:services`')

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
