import { loadConfig } from '../../src/config.js'
import { connectDatabase } from '../../src/db/connect.js'
import { describeRepositoryContract } from '../contract/repositories.contract.js'
import { createTestDatabase } from './test-stores.js'

describeRepositoryContract('PostgreSQL', async () => {
  const database = await createTestDatabase()
  const handle = await connectDatabase(loadConfig({ DATABASE_URL: database.url }).database)
  return { handle, drop: database.drop }
})
