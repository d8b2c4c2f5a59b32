import { loadConfig } from '../../src/config.js'
import { connectDatabase } from '../../src/db/connect.js'
import { describeRepositoryContract } from '../contract/repositories.contract.js'
import { createTestDatabase } from './test-stores.js'

describeRepositoryContract('PostgreSQL', async () => {
  const database = await createTestDatabase()
  const db = connectDatabase(loadConfig({ DATABASE_URL: database.url }).database)
  return { db, drop: database.drop }
})
