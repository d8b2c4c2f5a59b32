// The process frozen-reader.test.ts freezes: the service's own pool (dist/, as `npm run test:services`
// builds it) whose transaction locks a row, then reads 180 MB, and is frozen as it starts.
import { sql } from 'kysely'
import { openPostgres } from '../../dist/db/postgres.js'

const handle = openPostgres(
  { kind: 'postgres', url: process.env.URL, poolSize: 2 },
  Number(process.env.DEADLINE_MS),
)
handle.db
  .transaction()
  .execute(async (trx) => {
    await sql`SELECT id FROM held WHERE id = 1 FOR UPDATE`.execute(trx)
    const reading = sql`SELECT repeat('x', 600) FROM generate_series(1, 300000)`.execute(trx)
    process.send('locked')
    await reading
  })
  .catch(() => {})
