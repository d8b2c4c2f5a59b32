import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connectDatabase } from '../../src/db/connect.js'
import { describeRepositoryContract } from './repositories.contract.js'

describeRepositoryContract('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-repo-'))
  const handle = await connectDatabase({
    kind: 'sqlite',
    path: join(dir, 'petstore.sqlite'),
    timeoutMs: 2000,
  })
  return { handle, drop: async () => rmSync(dir, { recursive: true, force: true }) }
})
