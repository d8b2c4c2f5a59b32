import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describeRepositoryContract } from '../../test/contract/repositories.contract.js'
import { connectDatabase } from './connect.js'

describeRepositoryContract('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-repo-'))
  const db = connectDatabase({ kind: 'sqlite', path: join(dir, 'petstore.sqlite') })
  return { db, drop: async () => rmSync(dir, { recursive: true, force: true }) }
})
